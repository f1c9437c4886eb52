import CountersignCore
import Foundation
import Testing

/// Inputs that are well-formed enough to get deep into the service: each must end as a 4xx with
/// a stable code, never as a database error turned 500.
@Suite("Hostile input")
struct HostileInputTests {
    @Test func nulInAnyStringIsRefusedBeforeTheDatabase() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            let space = #""protectionSpace": {"host": "intranet.example.com", "port": 443, "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic"}"#
            let bodies: [(String, String, String)] = [
                ("/v1/credentials", tenant.adminKey, #"{"host": "a\u0000b", "account": "a", "password": "p"}"#),
                ("/v1/credentials", tenant.adminKey, #"{"host": "a.example.com", "account": "a\u0000", "password": "p"}"#),
                ("/v1/sessions/\(session)/challenges", tenant.clientKey, #"{"taskId": "t", "protectionSpace": {"host": "a\u0000b", "port": 443, "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic"}}"#),
                ("/v1/sessions/\(session)/challenges", tenant.clientKey, #"{"taskId": "t", "protectionSpace": {"host": "a.example.com", "port": 443, "protocol": "ht\u0000tps", "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic"}}"#),
                ("/v1/sessions/\(session)/credentials", tenant.clientKey, "{\(space), \"user\": \"u\", \"password\": \"p\\u0000\", \"persistence\": \"forSession\"}"),
                ("/v1/sessions/\(session)/responses", tenant.clientKey, #"{"taskId": "t", "status": 407, "headers": [["Proxy-Authenticate", "Basic realm=\"x\""]], "request": {"method": "GET", "url": "https://h.test/"}, "proxy": {"host": "p\u0000x", "port": 8080}}"#),
                ("/v1/sessions", tenant.clientKey, #"{"clientId": "device", "label": {"\u0000": 1}}"#),
            ]
            for (path, key, body) in bodies {
                let reply = try await api.call(.post, path, key: key, json: body)
                #expect(reply.status == 400 && reply.errorCode == "malformed_json", "\(path) \(body): \(reply)")
            }
            let long = String(repeating: "x", count: 300)
            for query in [
                "/v1/decisions?clientId=%00", "/v1/credentials?host=%00", "/v1/credentials?account=a%00b",
                // Filters are checked as the members they filter by, and fail as queries.
                "/v1/decisions?clientId=\(long)", "/v1/security-checks/states?clientId=\(long)", "/v1/security-checks/states?securityCheck=a%20b",
                "/v1/credentials?host=\(long)",
                // A misspelt filter does not list everything, and a parameter counts once.
                "/v1/decisions?sesionId=\(UUID())", "/v1/keys?limit=1&limit=2", "/v1/keys?limit=1&%6Cimit=2", "/v1/counters?blocked=maybe",
                // Percent-encoding that is broken or decodes to no UTF-8 text does not filter by
                // replacement characters; a multi-byte character cut by `&` is no character.
                "/v1/decisions?clientId=%FF%FE", "/v1/decisions?clientId=%E0%80%80", "/v1/credentials?host=%C0%80",
                "/v1/security-checks/states?clientId=%E2%82&securityCheck=%AC", "/v1/credentials?host=a%2", "/v1/credentials?host=a%G1",
            ] {
                let reply = try await api.call(.get, query, key: tenant.adminKey)
                #expect(reply.status == 400 && reply.errorCode == "invalid_query", "\(query): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            }
            // Well-formed UTF-8 filters as it did, and a name is percent-decoded as a value is.
            for query in ["/v1/decisions?clientId=b%C3%BCcher", "/v1/credentials?host=%E2%82%AC.example.com", "/v1/decisions?clientId=a+b", "/v1/decisions?%6Cimit=5"] {
                let reply = try await api.call(.get, query, key: tenant.adminKey)
                #expect(reply.status == 200, "\(query): \(reply)")
            }
            // As form encoders send them: `+` is a space, `%2B` a plus.
            _ = try await api.credential(tenant, account: "plus test")
            _ = try await api.credential(tenant, account: "c+d")
            for (query, accounts) in [("account=plus+test", ["plus test"]), ("account=c%2Bd", ["c+d"]), ("account=c+d", []), ("%61ccount=plus%20test", ["plus test"])] {
                let reply = try await api.call(.get, "/v1/credentials?\(query)", key: tenant.adminKey)
                #expect((reply["credentials"] as? [[String: Any]])?.compactMap { $0["account"] as? String } == accounts, "\(query): \(reply)")
            }
        }
    }

    /// A submission's space is checked as a challenge's is, TLS parts included, though it uses
    /// none of them: the same space is the same 400 on every route, and nothing is stored.
    @Test(arguments: [
        (#""serverTrust": {"certificates": ["!!"]}"#, "malformed_certificate"), (#""distinguishedNames": ["!!"]"#, "invalid_distinguished_name"),
    ])
    func submissionsRefuseMalformedTLSPartsAsChallengesDo(part: String, code: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            let space = #"{"host": "typed.example.com", "port": 443, "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic", \#(part)}"#
            let challenge = try await api.call(.post, "/v1/sessions/\(session)/challenges", key: tenant.clientKey, json: #"{"taskId": "t", "protectionSpace": \#(space)}"#)
            #expect(challenge.status == 400 && challenge.errorCode == code, "\(challenge)")
            let submission = try await api.call(
                .post, "/v1/sessions/\(session)/credentials", key: tenant.clientKey,
                json: #"{"protectionSpace": \#(space), "user": "u", "password": "p", "persistence": "forSession"}"#
            )
            #expect(submission.status == 400 && submission.errorCode == code, "\(submission)")
            let stored = try await api.call(.get, "/v1/credentials?host=typed.example.com", key: tenant.adminKey)
            #expect((stored.json["credentials"] as? [Any])?.isEmpty == true, "\(stored)")
        }
    }

    @Test(arguments: [#"a\u001bb"#, #"a\u007fb"#, #"a\u0085b"#, "a b", "a/b", ""])
    func hostsWithControlCharactersOrSpacesAreRefused(host: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            let credential = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: #"{"host": "\#(host)", "account": "a", "password": "p"}"#)
            #expect(credential.status == 400 && credential.errorCode == "invalid_field", "\(credential)")
            let challenge = try await api.challenge(tenant, session: session, host: host)
            #expect(challenge.status == 400 && challenge.errorCode == "invalid_field", "\(challenge)")
            let proxied = try await api.call(
                .post, "/v1/sessions/\(session)/responses", key: tenant.clientKey,
                json: #"{"taskId": "t", "status": 407, "headers": [["Proxy-Authenticate", "Basic realm=\"x\""]], "request": {"method": "GET", "url": "https://h.test/"}, "proxy": {"host": "\#(host)", "port": 8080}}"#
            )
            #expect(proxied.status == 400 && proxied.errorCode == "invalid_field", "\(proxied)")
        }
    }

    @Test func controlCharactersInProtocolAndMethodAreRefused() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            let method = try await api.challenge(tenant, session: session, method: #"NSURLAuthenticationMethod\u001bBasic"#)
            #expect(method.status == 400 && method.errorCode == "invalid_field", "\(method)")
            let scheme = try await api.call(
                .post, "/v1/sessions/\(session)/challenges", key: tenant.clientKey,
                json: #"{"taskId": "t", "protectionSpace": {"host": "a.example.com", "port": 443, "protocol": "ht\u007ftps", "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic"}}"#
            )
            #expect(scheme.status == 400 && scheme.errorCode == "invalid_field", "\(scheme)")
        }
    }

    /// A cursor given out, with its time replaced by one of the right shape that is no time
    /// (which the database, not the cursor's parser, finds out).
    @Test func aCursorWithAnImpossibleTimeIsRefused() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            for index in 0..<2 { _ = try await api.credential(tenant, account: "svc-\(index)") }
            let page = try await api.call(.get, "/v1/credentials?limit=1", key: tenant.adminKey)
            let given = try #require(page["nextCursor"] as? String, "\(page)")
            let base64 = given.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            let text = try #require(Data(base64Encoded: base64 + String(repeating: "=", count: (4 - base64.count % 4) % 4)).flatMap { String(data: $0, encoding: .utf8) })
            let parts = text.split(separator: "|", omittingEmptySubsequences: false)
            try #require(parts.count == 3, "\(text)")
            for time in ["2026-99-99 00:00:00+00", "2026-02-30 00:00:00+00", "2026-01-01 25:61:00+00"] {
                let cursor = Data("\(parts[0])|\(time)|\(parts[2])".utf8).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                let reply = try await api.call(.get, "/v1/credentials?cursor=\(cursor)", key: tenant.adminKey)
                #expect(reply.status == 400 && reply.errorCode == "invalid_query", "\(time): \(reply)")
            }
        }
    }

    /// Another list's cursor is refused, not read as a place in this one.
    @Test func aCursorOfAnotherListIsRefused() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            for index in 0..<2 { _ = try await api.credential(tenant, account: "svc-\(index)") }
            let page = try await api.call(.get, "/v1/credentials?limit=1", key: tenant.adminKey)
            let cursor = try #require(page["nextCursor"] as? String, "\(page)")
            #expect(try await api.call(.get, "/v1/credentials?limit=1&cursor=\(cursor)", key: tenant.adminKey).status == 200)
            for list in ["/v1/decisions", "/v1/keys", "/v1/counters", "/v1/identities", "/v1/security-checks/states"] {
                let reply = try await api.call(.get, "\(list)?cursor=\(cursor)", key: tenant.adminKey)
                #expect(reply.status == 400 && reply.errorCode == "invalid_query", "\(list): \(reply)")
            }
            // Nor is it a place in this list with other filters, or in another tenant's.
            let filtered = try await api.call(.get, "/v1/credentials?account=svc-0&cursor=\(cursor)", key: tenant.adminKey)
            #expect(filtered.status == 400 && filtered.errorCode == "invalid_query", "\(filtered)")
            let other = try await api.tenant()
            let elsewhere = try await api.call(.get, "/v1/credentials?cursor=\(cursor)", key: other.adminKey)
            #expect(elsewhere.status == 400 && elsewhere.errorCode == "invalid_query", "\(elsewhere)")
            // Cut short or padded, as a client might craft one: refused, never a crash.
            let id = "01a206fd-d378-723a-819e-23dee6e42dbd"
            for plain in ["credentials|\(id)", "credentials|", "credentials||\(id)", "credentials", "|2026-01-01 00:00:00+00|\(id)", "credentials|2026-01-01 00:00:00+00|\(id)|x"] {
                let crafted = Data(plain.utf8).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                let reply = try await api.call(.get, "/v1/credentials?cursor=\(crafted)", key: tenant.adminKey)
                #expect(reply.status == 400 && reply.errorCode == "invalid_query", "\(plain): \(reply)")
            }
        }
    }

    /// Whatever RFC 3339 calls a date-time (the contract's `format: date-time`) is read, in the
    /// query and in bodies alike.
    @Test func everyRFC3339DateTimeIsTaken() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            for since in ["2016-12-31T23:59:60Z", "2026-01-01T00:00:00%2B23:59", "2026-01-01t00:00:00.1234567890123z"] {
                let reply = try await api.call(.get, "/v1/decisions?since=\(since)", key: tenant.adminKey)
                #expect(reply.status == 200, "\(since): \(reply)")
            }
            let read = try await api.call(.get, "/v1/policy", key: tenant.adminKey)
            let version = try #require(read["version"] as? Int)
            let replaced = try await api.call(
                .put, "/v1/policy", key: tenant.adminKey,
                json: #"{"version": \#(version), "rules": [], "updatedAt": "2016-12-31T18:59:60.5-05:00", "updatedBy": "someone"}"#
            )
            #expect(replaced.status == 200, "\(replaced)")
            // Read only: what was sent back is ignored.
            let updatedAt = try #require(replaced.string("updatedAt").flatMap(Timestamp.parse))
            #expect(abs(updatedAt.timeIntervalSinceNow) < 60)
            #expect(replaced.string("updatedBy") != "someone")
        }
    }

    @Test func contradictionsAreRefusedNotAnsweredEmpty() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let inverted = try await api.call(.get, "/v1/decisions?since=2030-01-01T00:00:00Z&until=2020-01-01T00:00:00Z", key: tenant.adminKey)
            #expect(inverted.status == 400 && inverted.errorCode == "invalid_query", "\(inverted)")
            let negative = try await api.call(.put, "/v1/policy", key: tenant.adminKey, json: #"{"version": -1, "rules": []}"#)
            #expect(negative.status == 400 && negative.errorCode == "invalid_field", "\(negative)")
            // Credential fields are named as the body names them.
            let host = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: #"{"host": "a b", "account": "a", "password": "p"}"#)
            #expect(host.status == 400 && (host.json["error"] as? [String: any Sendable])?["message"] as? String == "'host' must be a host name or address", "\(host)")
        }
    }

    /// Framing no HTTP client library sends, so spoken by hand to a live server.
    @Test func brokenBodyFramingIsTheClientsFault() async throws {
        try await TestService.run(.live) { api in
            let tenant = try await api.tenant()
            let port = try #require(api.port)
            let head = "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tenant.clientKey)\r\nContent-Type: application/json\r\nConnection: close\r\n"
            for chunkSize in ["zz", "ffffffffffffffffffff"] {
                let reply = try await RawHTTP.exchange(head + "Transfer-Encoding: chunked\r\n\r\n\(chunkSize)\r\nabc\r\n0\r\n\r\n", port: port)
                #expect(reply.status == 400 && reply.body.contains("malformed_body"), "\(chunkSize): \(reply)")
            }
            // A declared length over the limit is refused at once, without waiting for the body.
            let started = ContinuousClock.now
            let tooLong = try await RawHTTP.exchange(head + "Content-Length: 10000000000\r\n\r\n", port: port)
            #expect(tooLong.status == 413 && tooLong.body.contains("body_too_large"), "\(tooLong)")
            #expect(ContinuousClock.now - started < .seconds(5))
            // Over the limit, no 100 Continue invites the body: the 413 is the only answer, and the
            // connection closes though the client did not ask it to.
            let keepAlive = head.replacingOccurrences(of: "Connection: close\r\n", with: "")
            let refused = try await RawHTTP.exchange(keepAlive + "Expect: 100-continue\r\nContent-Length: 10000000000\r\n\r\n", port: port)
            #expect(refused.status == 413, "\(refused)")
            #expect(refused.headers.contains { $0[0].lowercased() == "connection" && $0[1] == "close" }, "\(refused.headers)")
        }
    }

    @Test func bytesThatAreNoHTTPRequestGetAJSONError() async throws {
        try await TestService.run(.live) { api in
            let port = try #require(api.port)
            // None asks for the connection to close: the server closes it, or the exchange times out.
            let cases = [
                ("FROB /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501, "method_not_implemented"),
                ("GET /healthz HTTP/9.x\r\nHost: 127.0.0.1\r\n\r\n", 400, "malformed_request"),
                ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n", 431, "headers_too_large"),
                ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "malformed_request"),
                ("POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400, "malformed_request"),
            ]
            for (request, status, code) in cases {
                let reply = try await RawHTTP.exchange(request, port: port)
                #expect(reply.status == status, "\(request.prefix(40)): \(reply)")
                #expect(reply.body.contains("\"code\":\"\(code)\""), "\(reply.body)")
                let names = reply.headers.map { $0[0].lowercased() }
                #expect(names.contains("x-request-id") && names.contains("content-type"), "\(reply.headers)")
            }
            // CONNECT would turn the connection into a tunnel; it is refused, bodiless as SwiftNIO frames every answer to it, and closed.
            let connect = try await RawHTTP.exchange("CONNECT /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n", port: port)
            #expect(connect.status == 501, "\(connect)")
            // A route that reads no body answers, and the broken framing after it closes the
            // connection without a second, empty answer.
            let unread = try await RawHTTP.exchange("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", port: port)
            #expect(unread.status == 200 && !unread.body.contains("HTTP/1.1"), "\(unread)")
        }
    }

    /// Requests pipelined behind a good one: each is answered in order, refusals included.
    @Test func pipelinedRequestsAreAnsweredInOrderRefusalsIncluded() async throws {
        try await TestService.run(.live) { api in
            let tenant = try await api.tenant()
            let port = try #require(api.port)
            let health = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            let cases: [(String, [Int])] = [
                ("CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + health, [200, 501]),
                ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\n", [200, 400]),
                ("FROB /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", [200, 501]),
                ("GET /healthz HTXP/1.1\r\n\r\n", [200, 400]),
                ("HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", [200, 200]),
            ]
            for (second, expected) in cases {
                let text = try await RawHTTP.conversation(health + second, port: port)
                #expect(RawHTTP.statuses(text) == expected, "\(second.prefix(30)): \(text)")
            }
            // A 100 Continue for a pipelined request comes after the response owed before it.
            let expecting = "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tenant.clientKey)\r\n"
                + "Content-Type: application/json\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: 16\r\n\r\n"
            let text = try await RawHTTP.conversation(health + expecting, waitingFor: "100 Continue\r\n\r\n", thenBody: #"{"clientId":"p"}"#, port: port)
            #expect(RawHTTP.statuses(text) == [200, 100, 201], "\(text)")
        }
    }

    @Test func anHTTP10RequestClosesItsConnectionAfterItsAnswer() async throws {
        try await TestService.run(.live) { api in
            let port = try #require(api.port)
            // The exchange reads until the server closes; a connection kept open would time it out.
            let reply = try await RawHTTP.exchange("GET /healthz HTTP/1.0\r\n\r\n", port: port)
            #expect(reply.status == 200, "\(reply)")
            #expect(reply.headers.contains { $0[0].lowercased() == "connection" && $0[1] == "close" }, "\(reply.headers)")
            let kept = try await RawHTTP.conversation("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", port: port)
            #expect(RawHTTP.statuses(kept) == [200, 200], "\(kept)")
        }
    }

    /// RFC 9112 §3.2: the codec would keep the first of two `Host` lines, where a proxy in front
    /// may have routed by the other.
    @Test func aRequestNeedsExactlyOneValidHost() async throws {
        try await TestService.run(.live) { api in
            let port = try #require(api.port)
            for head in [
                "GET /healthz HTTP/1.1\r\n",
                "GET /healthz HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n",
                "GET /healthz HTTP/1.0\r\nHost: a.example\r\nhost: a.example\r\n",
                "GET /healthz HTTP/1.1\r\nHost: a.example/evil\r\n",
                "GET /healthz HTTP/1.1\r\nHost: user@a.example\r\n",
            ] {
                // The pipelined request after it is not answered: the connection closes.
                let reply = try await RawHTTP.conversation(head + "\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: port)
                #expect(RawHTTP.statuses(reply) == [400], "\(head): \(reply)")
                #expect(reply.contains("\"code\":\"malformed_request\""), "\(reply)")
            }
            for host in ["127.0.0.1:8080", "[::1]:8080", "countersign.internal", "xn--bcher-kva.example", ""] {
                let reply = try await RawHTTP.exchange("GET /healthz HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n", port: port)
                #expect(reply.status == 200, "Host: \(host): \(reply)")
            }
        }
    }

    /// An answer given before a body over the limit has arrived ends the connection: the rest
    /// of the body is not read, however long it is.
    @Test func aBodyOverTheLimitIsNotReadAfterItsAnswer() async throws {
        try await TestService.run(.live) { api in
            let port = try #require(api.port)
            for path in ["/v1/sessions", "/nowhere"] {
                let reply = try await RawHTTP.exchange("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10000000000\r\n\r\n", port: port)
                #expect([401, 404].contains(reply.status), "\(path): \(reply)")
                #expect(reply.headers.contains { $0[0].lowercased() == "connection" && $0[1] == "close" }, "\(path): \(reply.headers)")
            }
        }
    }

    @Test func expectContinueIsAnsweredBeforeTheBody() async throws {
        try await TestService.run(.live) { api in
            let tenant = try await api.tenant()
            let port = try #require(api.port)
            let body = #"{"clientId": "device-continue"}"#
            let head = "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tenant.clientKey)\r\n"
                + "Content-Type: application/json\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            let reply = try await RawHTTP.exchange(head: head, thenBody: body, port: port)
            #expect(reply.interim.hasPrefix("HTTP/1.1 100 Continue\r\n"), "\(reply.interim)")
            #expect(reply.final.status == 201, "\(reply.final)")
            #expect(reply.final.body.contains("\"clientId\":\"device-continue\""), "\(reply.final.body)")
        }
    }
}
