import CountersignCrypto
import CountersignPostgres
import Foundation
import Testing

@Suite("Raw 401/407/403 responses")
struct RawResponseTests {
    static let rfcDigest = [
        ["Date", "Mon, 23 Nov 2026 10:00:00 GMT"],
        [
            "WWW-Authenticate",
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
        ],
        [
            "WWW-Authenticate",
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
        ],
    ]
    static let rfcURL = "https://www.example.org/dir/index.html"

    /// A tenant whose one rule releases the credentials of `host` with `then` (JSON members).
    func releasing(_ api: TestAPI, host: String = "*", then: String = "") async throws -> TestAPI.Tenant {
        let tenant = try await api.tenant()
        try await api.policy(
            tenant,
            rules: #"[{"id": "release", "name": "release", "match": {"host": "\#(host)"}, "then": {"disposition": "useCredential"\#(then.isEmpty ? "" : ", " + then)}}]"#
        )
        return tenant
    }

    /// Makes the database run `action` (by default: cancel the statement with 57014, as a busy
    /// one does) before every `operations` of a row of `table` that meets `condition`, until
    /// ``stopIntercepting(on:through:)``.
    func interceptWrites(
        _ operations: String,
        on table: String,
        when condition: String = "true",
        action: String = "RAISE EXCEPTION 'busy' USING ERRCODE = '57014'",
        through side: PostgresPool
    ) async throws {
        try await side.withConnection { connection in
            try connection.simpleQuery(
                """
                CREATE FUNCTION intercept_writes() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                  IF \(condition) THEN \(action); END IF;
                  RETURN NEW;
                END $$;
                CREATE TRIGGER intercept_writes BEFORE \(operations) ON \(table) FOR EACH ROW EXECUTE FUNCTION intercept_writes();
                """
            )
        }
    }

    func stopIntercepting(on table: String, through side: PostgresPool) async throws {
        try await side.withConnection { try $0.simpleQuery("DROP TRIGGER intercept_writes ON \(table); DROP FUNCTION intercept_writes()") }
    }

    /// A tenant whose policy releases (with `then`) alice's password for files.example.com,
    /// and a session of it.
    func aliceSession(_ api: TestAPI, then: String = "") async throws -> (TestAPI.Tenant, String) {
        let tenant = try await releasing(api, then: then)
        _ = try await api.credential(tenant, host: "files.example.com", account: "alice", password: "pw")
        return (tenant, try await api.session(tenant))
    }

    /// A server's NTLM CHALLENGE message (type 2), base64.
    static let ntlmChallengeMessage = "TlRMTVNTUAACAAAADAAMADAAAAA1goniASNFZ4mrze8AAAAAAAAAAA=="

    /// The account an NTLM challenge from files.example.com is answered with.
    func ntlmCredential(_ api: TestAPI, _ tenant: TestAPI.Tenant) async throws {
        _ = try await api.credential(tenant, json: #""host": "files.example.com", "account": "svc", "password": "pw", "domain": "CORP""#)
    }

    /// A Digest challenge of realm `Files` with `nonce`, stale or not.
    func digest(_ nonce: String, stale: Bool) -> [[String]] {
        [["WWW-Authenticate", #"Digest realm="Files", nonce="\#(nonce)", qop="auth"\#(stale ? ", stale=true" : "")"#]]
    }

    func decision(_ api: TestAPI, _ tenant: TestAPI.Tenant, _ id: String) async throws -> Reply {
        let reply = try await api.call(.get, "/v1/decisions/\(id)", key: tenant.adminKey)
        try #require(reply.status == 200, "\(reply)")
        return reply
    }

    @Test func basicIsAnsweredWithTheReadyHeaderAndRecorded() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api)
            _ = try await api.credential(tenant, host: "files.example.com", account: "alice", password: "wonder land")
            let session = try await api.session(tenant)
            let reply = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", #"Basic realm="Files", charset="UTF-8""#]])
            #expect(reply.status == 200, "\(reply)")
            #expect(reply.string("disposition") == "useCredential")
            #expect(reply.string("reasonCode") == "authorization")
            #expect(reply.authorizationName == "Authorization")
            #expect(reply.authorizationValue == "Basic " + Data("alice:wonder land".utf8).base64EncodedString())
            #expect(reply["credential"] is NSNull)
            #expect(reply.challengeStatuses == ["chosen"])
            let space = try #require(reply["protectionSpace"] as? [String: Any])
            #expect(space["host"] as? String == "files.example.com" && space["realm"] as? String == "Files")
            #expect(space["authenticationMethod"] as? String == "NSURLAuthenticationMethodHTTPBasic")

            let recorded = try await decision(api, tenant, try #require(reply.string("decisionId")))
            #expect(recorded.string("kind") == "response")
            #expect(recorded.string("disposition") == "useCredential")
            #expect(recorded.string("credentialId") != nil)
        }
    }

    @Test func digestTakesTheStrongestChallengeAndKeepsThePasswordHome() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api, host: "www.example.org")
            _ = try await api.credential(tenant, host: "www.example.org", account: "Mufasa", password: "Circle of Life")
            let session = try await api.session(tenant)
            let reply = try await api.response(tenant, session: session, headers: Self.rfcDigest, url: Self.rfcURL)
            #expect(reply.status == 200, "\(reply)")
            #expect(!String(decoding: reply.body, as: UTF8.self).contains("Circle of Life"))
            #expect(reply["credential"] is NSNull)
            #expect(reply.challengeStatuses == ["chosen", "lowerPreference"])
            let header = try DigestHeader(try #require(reply.authorizationValue))
            #expect(header["algorithm"] == "SHA-256")
            #expect(header["username"] == "Mufasa" && header["uri"] == "/dir/index.html" && header["qop"] == "auth")
            #expect(header["opaque"] == "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS")
            #expect(header["nc"] == "00000001")
            #expect(header["cnonce"]?.count == 32)
            #expect(header["response"] == header.expectedResponse(password: "Circle of Life", method: "GET"))

            // Another task with the same nonce continues its count; the cnonce is fresh.
            let next = try await api.response(tenant, session: session, taskId: "task-2", headers: Self.rfcDigest, url: Self.rfcURL)
            let second = try DigestHeader(try #require(next.authorizationValue))
            #expect(second["nc"] == "00000002")
            #expect(second["cnonce"] != header["cnonce"])
            #expect(second["response"] == second.expectedResponse(password: "Circle of Life", method: "GET"))
        }
    }

    /// A `-sess` algorithm's A1 is computed once per nonce, from the first cnonce (RFC 7616
    /// §3.4.2): a server that keeps that session key checks every later header against it, so
    /// each header of the nonce carries the first cnonce, on any task.
    @Test func sessAlgorithmsKeepTheNoncesFirstCnonce() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api, host: "www.example.org")
            _ = try await api.credential(tenant, host: "www.example.org", account: "Mufasa", password: "Circle of Life")
            let session = try await api.session(tenant)
            let challenge = [["WWW-Authenticate", #"Digest realm="sess@example.org", qop="auth", algorithm=SHA-256-sess, nonce="sess-nonce-1""#]]
            var headers: [DigestHeader] = []
            for task in ["task-1", "task-2", "task-3"] {
                let reply = try await api.response(tenant, session: session, taskId: task, headers: challenge, url: Self.rfcURL)
                headers.append(try DigestHeader(try #require(reply.authorizationValue, "\(reply)")))
            }
            #expect(headers.map { $0["nc"] } == ["00000001", "00000002", "00000003"])
            let sessionKey = headers[0]["cnonce"]
            #expect(sessionKey?.count == 32 && headers.allSatisfy { $0["cnonce"] == sessionKey }, "\(headers.map { $0["cnonce"] })")
            // The response a server computes from its kept A1 (SHA-256 of H(user:realm:password):nonce:first cnonce).
            func h(_ text: String) -> String { Digest.hash(.sha256, Array(text.utf8)).hexString }
            let a1 = h("\(h("Mufasa:sess@example.org:Circle of Life")):sess-nonce-1:\(sessionKey ?? "")")
            for header in headers {
                let expected = h("\(a1):sess-nonce-1:\(header["nc"] ?? ""):\(sessionKey ?? ""):auth:\(h("GET:/dir/index.html"))")
                #expect(header["response"] == expected)
            }
        }
    }

    @Test func clientsSharingANonceNeverReuseACount() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api, host: "www.example.org")
            _ = try await api.credential(tenant, host: "www.example.org", account: "Mufasa", password: "Circle of Life")
            let sessions = [try await api.session(tenant, clientId: "device-1"), try await api.session(tenant, clientId: "device-2")]
            let counts = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<24 {
                    group.addTask {
                        let reply = try await api.response(
                            tenant, session: sessions[index % 2], taskId: "task-\(index)", headers: Self.rfcDigest, url: Self.rfcURL
                        )
                        let header = try DigestHeader(try #require(reply.authorizationValue, "\(reply)"))
                        #expect(header["response"] == header.expectedResponse(password: "Circle of Life", method: "GET"))
                        return try #require(header["nc"])
                    }
                }
                var counts: [String] = []
                for try await count in group { counts.append(count) }
                return counts
            }
            #expect(counts.sorted() == (1...24).map { String(format: "%08x", $0) })
        }
    }

    @Test func aProxyChallengeUsesOnlyProxyCredentials() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api, host: "proxy.corp.example.com")
            _ = try await api.credential(tenant, host: "proxy.corp.example.com", account: "origin-user", password: "origin-pass")
            let session = try await api.session(tenant)
            let proxy: [String: any Sendable] = ["host": "proxy.corp.example.com", "port": 3128]
            let headers = [["Proxy-Authenticate", #"Basic realm="corp proxy""#], ["WWW-Authenticate", #"Basic realm="ignored""#]]

            let without = try await api.response(tenant, session: session, status: 407, headers: headers, url: "http://api.example.com/v1", proxy: proxy)
            #expect(without.string("disposition") == "cancelAuthenticationChallenge", "\(without)")
            #expect(without.string("reasonCode") == "no_credential")
            #expect(without.challengeStatuses == ["noCredential"])

            _ = try await api.credential(
                tenant, json: #""host": "proxy.corp.example.com", "port": 3128, "isProxy": true, "account": "proxy-user", "password": "proxy-pass""#
            )
            let reply = try await api.response(
                tenant, session: session, taskId: "task-2", status: 407, headers: headers, url: "http://api.example.com/v1", proxy: proxy
            )
            #expect(reply.string("disposition") == "useCredential", "\(reply)")
            #expect(reply.authorizationName == "Proxy-Authorization")
            #expect(reply.authorizationValue == "Basic " + Data("proxy-user:proxy-pass".utf8).base64EncodedString())
            let space = try #require(reply["protectionSpace"] as? [String: Any])
            #expect(space["isProxy"] as? Bool == true && space["port"] as? Int == 3128 && space["realm"] as? String == "corp proxy")

            // Digest through a proxy hashes the absolute URL the request line carried.
            let digest = try await api.response(
                tenant, session: session, taskId: "task-3", status: 407,
                headers: [["Proxy-Authenticate", #"Digest realm="corp proxy", nonce="p-nonce", qop="auth""#]],
                url: "http://api.example.com/v1?x=1", proxy: proxy
            )
            let header = try DigestHeader(try #require(digest.authorizationValue, "\(digest)"))
            #expect(header["uri"] == "http://api.example.com/v1?x=1")
            #expect(header["response"] == header.expectedResponse(password: "proxy-pass", method: "GET"))

            // For https the proxy's 407 answers the CONNECT of the tunnel, whatever method the
            // client forwards: that one goes to the origin, which the proxy never sees.
            let tunnel = try await api.response(
                tenant, session: session, taskId: "task-4", status: 407,
                headers: [["Proxy-Authenticate", #"Digest realm="corp proxy", nonce="t-nonce", qop="auth""#]],
                url: "https://api.example.com/v1?x=1", proxy: proxy
            )
            let tunnelHeader = try DigestHeader(try #require(tunnel.authorizationValue, "\(tunnel)"))
            #expect(tunnelHeader["uri"] == "api.example.com:443")
            #expect(tunnelHeader["response"] == tunnelHeader.expectedResponse(password: "proxy-pass", method: "CONNECT"))
        }
    }

    @Test func aSecond401CountsAndBlocksAtMaxFailures() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api, then: #""maxFailures": 2"#)
            _ = try await api.credential(tenant, host: "files.example.com", account: "alice", password: "stale-password")
            let session = try await api.session(tenant)
            let basic = [["WWW-Authenticate", #"Basic realm="Files""#]]

            let first = try await api.response(tenant, session: session, headers: basic)
            #expect(first.json["remainingAttempts"] as? Int == 2)
            #expect(first["countedRejection"] is NSNull)
            let second = try await api.response(tenant, session: session, headers: basic)
            #expect(second.string("countedRejection") == first.string("decisionId"))
            #expect(second.string("disposition") == "useCredential")
            #expect(second.json["remainingAttempts"] as? Int == 1)
            let third = try await api.response(tenant, session: session, headers: basic)
            #expect(third.string("countedRejection") == second.string("decisionId"))
            #expect(third.string("disposition") == "cancelAuthenticationChallenge")
            #expect(third.string("reasonCode") == "credential_blocked")
            #expect(third["authorization"] is NSNull)
            #expect(third.json["remainingAttempts"] as? Int == 0)
            #expect(third.string("blockedUntil") != nil)

            let rejected = try await decision(api, tenant, try #require(first.string("decisionId")))
            #expect(rejected.string("outcome") == "rejected" && rejected.string("outcomeSource") == "response")
            #expect(rejected.json["outcomeStatus"] as? Int == 401 && rejected.json["countedRejection"] as? Bool == true)

            // Blocked for every task and client, not only this one.
            let other = try await api.response(tenant, session: try await api.session(tenant, clientId: "device-2"), taskId: "other", headers: basic)
            #expect(other.string("reasonCode") == "credential_blocked")
            let counters = try await api.call(.get, "/v1/counters", key: tenant.adminKey)
            let counter = try #require((counters.json["counters"] as? [[String: Any]])?.first)
            #expect(counter["failures"] as? Int == 2)
        }
    }

    /// The answer to a task's first 401 was lost after its release was recorded (a 503, a
    /// dropped connection): forwarded again, the same 401 must not count that release, which
    /// never reached the client, as rejected. `carriedHeader: false` says no header went out;
    /// `previousDecisionId` names the one that did.
    @Test func aForwardRepeatedAfterALostAnswerJudgesOnlyTheHeaderSent() async throws {
        try await TestService.run { api in
            let (tenant, session) = try await aliceSession(api, then: #""maxFailures": 2"#)
            let basic = [["WWW-Authenticate", #"Basic realm="Files""#]]

            let lost = try await api.response(tenant, session: session, headers: basic, carriedHeader: false)
            let again = try await api.response(tenant, session: session, headers: basic, carriedHeader: false)
            #expect(again["countedRejection"] is NSNull, "\(again)")
            #expect(again.json["remainingAttempts"] as? Int == 2)
            #expect(try await decision(api, tenant, try #require(lost.string("decisionId")))["outcome"] is NSNull)

            // The header of `again` went out and was refused; the refusal's forward is repeated.
            let sent = try #require(again.string("decisionId"))
            let refused = try await api.response(tenant, session: session, headers: basic, previousDecisionId: sent, carriedHeader: true)
            #expect(refused.string("countedRejection") == sent)
            let repeated = try await api.response(tenant, session: session, headers: basic, previousDecisionId: sent, carriedHeader: true)
            #expect(repeated["countedRejection"] is NSNull, "\(repeated)")
            let counters = try await api.call(.get, "/v1/counters", key: tenant.adminKey)
            #expect((counters.json["counters"] as? [[String: Any]])?.first?["failures"] as? Int == 1)

            let contradiction = try await api.response(tenant, session: session, headers: basic, previousDecisionId: sent, carriedHeader: false)
            #expect(contradiction.status == 400 && contradiction.errorCode == "invalid_field", "\(contradiction)")
        }
    }

    /// A request redirected from the server that took the header to another that asks for its
    /// own login: naming the header, the 401 from the other server is no rejection of it.
    @Test func aNamedHeaderIsJudgedOnlyByItsOwnServer() async throws {
        try await TestService.run { api in
            let (tenant, session) = try await aliceSession(api, then: #""maxFailures": 2"#)
            let basic = [["WWW-Authenticate", #"Basic realm="Files""#]]
            let released = try #require(try await api.response(tenant, session: session, headers: basic, carriedHeader: false).string("decisionId"))
            let elsewhere = try await api.response(
                tenant, session: session, headers: [["WWW-Authenticate", #"Basic realm="SSO""#]], url: "https://sso.example.com/login",
                previousDecisionId: released, carriedHeader: true
            )
            #expect(elsewhere.status == 200, "\(elsewhere)")
            #expect(elsewhere["countedRejection"] is NSNull, "\(elsewhere)")
            #expect(try await decision(api, tenant, released)["outcome"] is NSNull)
            // Its own server's 401 still rejects it.
            let refused = try await api.response(tenant, session: session, headers: basic, previousDecisionId: released, carriedHeader: true)
            #expect(refused.string("countedRejection") == released)
        }
    }

    /// A host written another way than decisions record it (a fully qualified name's trailing dot,
    /// a proxy's IPv6 address without brackets) is the same server: a second 401/407 for the
    /// header just issued is its rejection, and a 403 its refusal.
    @Test func aSecond401CountsWhateverWayTheHostIsWritten() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api, then: #""maxFailures": 5"#)
            _ = try await api.credential(tenant, host: "files.example.com", account: "alice", password: "pw")
            _ = try await api.credential(tenant, json: #""host": "[2001:db8::7]", "port": 3128, "isProxy": true, "account": "proxy-user", "password": "pp""#)
            let session = try await api.session(tenant)
            let basic = [["WWW-Authenticate", #"Basic realm="Files""#]]
            let url = "https://files.example.com./reports/q3.pdf"

            let first = try await api.response(tenant, session: session, headers: basic, url: url)
            #expect(first.string("disposition") == "useCredential", "\(first)")
            let second = try await api.response(tenant, session: session, headers: basic, url: url)
            #expect(second.string("countedRejection") == first.string("decisionId"), "\(second)")
            let refused = try await api.response(tenant, session: session, status: 403, headers: [], url: url)
            #expect(refused.status == 200 && refused.string("reasonCode") == "server_refused", "\(refused)")

            let proxy: [String: any Sendable] = ["host": "2001:db8::7", "port": 3128]
            let proxyBasic = [["Proxy-Authenticate", #"Basic realm="corp proxy""#]]
            let viaProxy = try await api.response(
                tenant, session: session, taskId: "task-2", status: 407, headers: proxyBasic, url: "http://api.example.com/v1", proxy: proxy
            )
            #expect(viaProxy.string("disposition") == "useCredential", "\(viaProxy)")
            let again = try await api.response(
                tenant, session: session, taskId: "task-2", status: 407, headers: proxyBasic, url: "http://api.example.com/v1", proxy: proxy
            )
            #expect(again.string("countedRejection") == viaProxy.string("decisionId"), "\(again)")
        }
    }

    @Test func aStaleNonceIsNotARejection() async throws {
        try await TestService.run { api in
            let (tenant, session) = try await aliceSession(api, then: #""maxFailures": 5"#)
            let first = try await api.response(tenant, session: session, headers: digest("n1", stale: false))
            #expect(first.json["remainingAttempts"] as? Int == 5)
            let stale = try await api.response(tenant, session: session, headers: digest("n2", stale: true))
            #expect(stale.string("disposition") == "useCredential", "\(stale)")
            #expect(stale.string("reasonCode") == "stale_nonce")
            #expect(stale["countedRejection"] is NSNull)
            #expect(stale.json["remainingAttempts"] as? Int == 5)
            let header = try DigestHeader(try #require(stale.authorizationValue))
            #expect(header["nonce"] == "n2" && header["nc"] == "00000001")
            let unrecorded = try await decision(api, tenant, try #require(first.string("decisionId")))
            #expect(unrecorded["outcome"] is NSNull)

            // Without stale, the same header refused again is a rejection.
            let refused = try await api.response(tenant, session: session, headers: digest("n3", stale: false))
            #expect(refused.string("countedRejection") == stale.string("decisionId"))
            #expect(refused.json["remainingAttempts"] as? Int == 4)

            // stale=true in another realm renews no nonce of the earlier release: it was refused,
            // and the answer says so.
            let elsewhere = try await api.response(
                tenant, session: session, headers: [["WWW-Authenticate", #"Digest realm="Other", nonce="n4", qop="auth", stale=true"#]]
            )
            #expect(elsewhere.string("countedRejection") == refused.string("decisionId"), "\(elsewhere)")
            #expect(elsewhere.string("reasonCode") == "authorization")

            // A task's first response renews no header: stale or not, it is an authorization.
            let opening = try await api.response(tenant, session: session, taskId: "task-fresh", headers: digest("n5", stale: true))
            #expect(opening.string("reasonCode") == "authorization", "\(opening)")
        }
    }

    /// A server that calls every nonce stale refuses the credential: after three renewals in one
    /// attempt, the next is a rejection, and the client's loop ends at the block.
    @Test func aServerCallingEveryNonceStaleIsRefusingTheCredential() async throws {
        try await TestService.run { api in
            let (tenant, session) = try await aliceSession(api, then: #""maxFailures": 2"#)
            func stale(_ nonce: Int) async throws -> Reply {
                try await api.response(
                    tenant, session: session, headers: [["WWW-Authenticate", #"Digest realm="Files", nonce="n\#(nonce)", qop="auth", stale=true"#]]
                )
            }
            _ = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", #"Digest realm="Files", nonce="n0", qop="auth""#]])
            var replies: [Reply] = []
            for nonce in 1...8 { replies.append(try await stale(nonce)) }
            let counted = replies.map { $0.string("countedRejection") != nil }
            // Three renewals, a rejection (a new attempt), three renewals, a rejection that blocks.
            #expect(counted == [false, false, false, true, false, false, false, true], "\(replies)")
            #expect(replies[3].string("reasonCode") == "authorization", "\(replies[3])")
            #expect(replies[7].string("disposition") != "useCredential", "\(replies[7])")
        }
    }

    @Test func a403AfterTheCredentialStopsWithoutCounting() async throws {
        try await TestService.run { api in
            let (tenant, session) = try await aliceSession(api, then: #""maxFailures": 1"#)
            let released = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", #"Basic realm="Files""#]])
            let releasedID = try #require(released.string("decisionId"))

            let refused = try await api.response(tenant, session: session, status: 403, headers: [["Content-Type", "text/html"]])
            #expect(refused.status == 200, "\(refused)")
            #expect(refused.string("disposition") == "cancelAuthenticationChallenge")
            #expect(refused.string("reasonCode") == "server_refused")
            #expect(refused.string("source") == "serverResponse")
            #expect(refused["authorization"] is NSNull)
            #expect((refused.json["challenges"] as? [Any])?.isEmpty == true)
            let earlier = try await decision(api, tenant, releasedID)
            #expect(earlier.string("outcome") == "refused")
            #expect(earlier.json["outcomeStatus"] as? Int == 403)
            #expect(earlier.json["countedRejection"] as? Bool == false)
            let recorded = try await decision(api, tenant, try #require(refused.string("decisionId")))
            #expect(recorded.string("disposition") == "cancelAuthenticationChallenge" && recorded.string("source") == "serverResponse")

            // Not a rejection: with maxFailures 1 the credential would otherwise be blocked now.
            let counters = try await api.call(.get, "/v1/counters", key: tenant.adminKey)
            #expect((counters.json["counters"] as? [Any])?.isEmpty == true, "\(counters)")
            let again = try await api.response(tenant, session: session, taskId: "task-2", headers: [["WWW-Authenticate", #"Basic realm="Files""#]])
            #expect(again.string("disposition") == "useCredential")

            let nothingReleased = try await api.response(tenant, session: session, taskId: "task-9", status: 403, headers: [])
            #expect(nothingReleased.status == 409)
            #expect(nothingReleased.errorCode == "no_released_credential")
        }
    }

    @Test func a403AfterFinishTasksIsStillTheOutcomeOfThePendingDecision() async throws {
        try await TestService.run { api in
            let (tenant, session) = try await aliceSession(api)
            let released = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", #"Basic realm="Files""#]])
            let invalidated = try await api.call(.post, "/v1/sessions/\(session)/invalidate", key: tenant.clientKey, json: #"{"mode": "finishTasks"}"#)
            #expect(invalidated.status == 200)

            let refused = try await api.response(tenant, session: session, status: 403, headers: [])
            #expect(refused.status == 409 && refused.errorCode == "session_invalidated", "\(refused)")
            let earlier = try await decision(api, tenant, try #require(released.string("decisionId")))
            #expect(earlier.string("outcome") == "refused")
            let challenge = try await api.response(tenant, session: session, taskId: "task-2", headers: [["WWW-Authenticate", #"Basic realm="Files""#]])
            #expect(challenge.status == 409 && challenge.errorCode == "session_invalidated")
        }
    }

    @Test func a401AfterFinishTasksIsStillTheRejectionOfThePendingDecision() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api, then: #""maxFailures": 5"#)
            let credential = try await api.credential(tenant, host: "files.example.com", account: "alice", password: "pw")
            let session = try await api.session(tenant)
            let released = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", #"Basic realm="Files""#]])
            #expect(try await api.invalidate(tenant, session: session, mode: "finishTasks").status == 200)

            let again = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", #"Basic realm="Files""#]])
            #expect(again.status == 409 && again.errorCode == "session_invalidated", "\(again)")
            let earlier = try await decision(api, tenant, try #require(released.string("decisionId")))
            #expect(earlier.string("outcome") == "rejected")
            #expect(try await api.counters(tenant, credential: credential).first?["failures"] as? Int == 1)
        }
    }

    /// A continuation that cannot be recorded gives up its claim on the release, so the same
    /// response forwarded again is answered as the first one was, not as a duplicate.
    @Test func aContinuationNotRecordedLeavesTheReleaseToContinue() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api)
            try await ntlmCredential(api, tenant)
            let session = try await api.session(tenant)
            let release = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]])
            #expect(release.string("reasonCode") == "ntlm_handshake", "\(release)")
            #expect(try await api.invalidate(tenant, session: session, mode: "finishTasks").status == 200)
            let type2 = [["WWW-Authenticate", "NTLM \(Self.ntlmChallengeMessage)"]]
            for _ in 0..<2 {
                let reply = try await api.response(tenant, session: session, headers: type2)
                #expect(reply.status == 409 && reply.errorCode == "session_invalidated", "\(reply)")
            }
            let earlier = try await decision(api, tenant, try #require(release.string("decisionId")))
            #expect(earlier["outcome"] is NSNull, "\(earlier)")
        }
    }

    /// A renewed nonce whose answer cannot be built once its decision is recorded (the nonce count
    /// is not taken: 503, retry) gives its claim up too, so the same response forwarded again,
    /// naming the release it answers, goes on instead of being told it came too late.
    @Test func aContinuationWhoseAnswerFailsLeavesTheReleaseToContinue() async throws {
        try await TestService.withSideAccess { api, side in
            let (tenant, session) = try await aliceSession(api, then: #""maxFailures": 5"#)
            let first = try await api.response(tenant, session: session, headers: digest("n1", stale: false))
            let released = try #require(first.string("decisionId"), "\(first)")
            try await interceptWrites("INSERT", on: "digest_nonce_counts", through: side)
            let failed = try await api.response(tenant, session: session, headers: digest("n2", stale: true), previousDecisionId: released)
            #expect(failed.status == 503, "\(failed)")
            try await stopIntercepting(on: "digest_nonce_counts", through: side)
            let again = try await api.response(tenant, session: session, headers: digest("n2", stale: true), previousDecisionId: released)
            #expect(again.status == 200 && again.string("reasonCode") == "stale_nonce", "\(again)")
            #expect(again.authorizationValue != nil, "\(again)")
        }
    }

    /// A first answer whose Digest header cannot be built once its decision is recorded (503,
    /// retry) never reached the client: the same 401 forwarded again is no rejection of it.
    @Test func aDigestAnswerThatFailedIsNoRejectionWhenForwardedAgain() async throws {
        try await TestService.withSideAccess { api, side in
            let (tenant, session) = try await aliceSession(api, then: #""maxFailures": 1"#)
            try await interceptWrites("INSERT", on: "digest_nonce_counts", through: side)
            let failed = try await api.response(tenant, session: session, headers: digest("n1", stale: false))
            #expect(failed.status == 503, "\(failed)")
            try await stopIntercepting(on: "digest_nonce_counts", through: side)
            let again = try await api.response(tenant, session: session, headers: digest("n1", stale: false))
            #expect(again.status == 200 && again.string("disposition") == "useCredential", "\(again)")
            #expect(again["countedRejection"] is NSNull, "\(again)")
            #expect(again.json["remainingAttempts"] as? Int == 1, "\(again)")
            let header = try DigestHeader(try #require(again.authorizationValue))
            #expect(header["nonce"] == "n1" && header["nc"] == "00000001")
            let recorded = try await decision(api, tenant, try #require(again.string("decisionId")))
            #expect(recorded.json["previousFailureCount"] as? Int == 0, "\(recorded)")
        }
    }

    @Test func a403ReportedAsAnOutcomeIsRecordedAsRefused() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api, then: #""maxFailures": 1"#)
            _ = try await api.credential(tenant, host: "intranet.example.com", account: "svc", password: "pw")
            let session = try await api.session(tenant)
            let answer = try await api.challenge(tenant, session: session)
            let id = try #require(answer.string("decisionId"))
            for _ in 0..<2 {
                let report = try await api.call(
                    .post, "/v1/decisions/\(id)/outcome", key: tenant.clientKey, json: #"{"outcome": "rejected", "upstreamStatus": 403}"#
                )
                #expect(report.status == 200, "\(report)")
                #expect(report.json["counted"] as? Bool == false)
                #expect(report.string("disposition") == "cancelAuthenticationChallenge")
                #expect(report.string("reasonCode") == "server_refused")
                #expect((report.json["decision"] as? [String: Any])?["outcome"] as? String == "refused")
            }
            let conflicting = try await api.call(.post, "/v1/decisions/\(id)/outcome", key: tenant.clientKey, json: #"{"outcome": "rejected"}"#)
            #expect(conflicting.errorCode == "outcome_conflict")
            let still = try await api.challenge(tenant, session: session, taskId: "task-2")
            #expect(still.string("disposition") == "useCredential")
        }
    }

    @Test func hostileAndBrokenChallengesAreRefusedWithTheParsersCode() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api)
            _ = try await api.credential(tenant, host: "files.example.com")
            let session = try await api.session(tenant)
            let cases: [([[String]], String)] = [
                ([["WWW-Authenticate", "Basic realm=\"" + String(repeating: "x", count: 70_000) + "\""]], "challenge_too_large"),
                ([["WWW-Authenticate", #"Digest realm="open, nonce="n""#]], "malformed_challenge"),
                ([["WWW-Authenticate", "Digest " + (0..<1500).map { "p\($0)=v" }.joined(separator: ",")]], "too_many_parameters"),
                (Array(repeating: ["WWW-Authenticate", "Basic"], count: 3000), "too_many_challenges"),
                ([["Content-Type", "text/html"]], "missing_challenge"),
                ([["WWW-Authenticate", #"Digest realm="r", qop="auth""#]], "missing_challenge_parameter"),
                ([["WWW-Authenticate", #"Basic realm="a", realm="b""#]], "duplicate_parameter"),
            ]
            for (headers, code) in cases {
                let reply = try await api.response(tenant, session: session, headers: headers)
                #expect(reply.status == 400 && reply.errorCode == code, "\(code): \(reply.status) \(reply.errorCode ?? "-")")
            }
            let shapes: [(String, String)] = [
                (#"{"taskId": "t", "status": 401, "headers": [["WWW-Authenticate"]], "request": {"method": "GET", "url": "https://h/"}}"#, "invalid_field"),
                (#"{"taskId": "t", "status": 500, "headers": [], "request": {"method": "GET", "url": "https://h/"}}"#, "invalid_enum_value"),
                (#"{"taskId": "t", "status": 407, "headers": [["Proxy-Authenticate", "Basic"]], "request": {"method": "GET", "url": "https://h/"}}"#, "missing_field"),
                (#"{"taskId": "t", "status": 401, "headers": [], "request": {"method": "GET", "url": "https://h/"}, "extra": 1}"#, "unknown_field"),
                (#"{"taskId": "t", "status": 401, "headers": "Basic", "request": {"method": "GET", "url": "https://h/"}}"#, "invalid_field_type"),
            ]
            for (body, code) in shapes {
                let reply = try await api.call(.post, "/v1/sessions/\(session)/responses", key: tenant.clientKey, json: body)
                #expect(reply.status == 400 && reply.errorCode == code, "\(body): \(reply)")
            }
            // Nothing was recorded for any of them.
            let listed = try await api.call(.get, "/v1/decisions", key: tenant.adminKey)
            #expect((listed.json["decisions"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func negotiateAndUnknownSchemesAreReportedNotAnswered() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api)
            _ = try await api.credential(tenant, host: "files.example.com")
            let session = try await api.session(tenant)
            let reply = try await api.response(
                tenant, session: session,
                headers: [["WWW-Authenticate", "Negotiate"], ["WWW-Authenticate", #"Bearer realm="api", error="invalid_token""#], ["WWW-Authenticate", #"Digest realm="r", nonce="n", algorithm=SHA-1"#]]
            )
            #expect(reply.status == 200, "\(reply)")
            #expect(reply.string("disposition") == "performDefaultHandling")
            #expect(reply.string("reasonCode") == "no_supported_challenge")
            #expect(reply.string("source") == "unsupportedMethod")
            #expect(reply.challengeStatuses == ["unsupportedScheme", "unsupportedScheme", "unsupportedAlgorithm"])
            let recorded = try await decision(api, tenant, try #require(reply.string("decisionId")))
            #expect(recorded.string("kind") == "response")
        }
    }

    @Test func ntlmReleasesTheCredentialForTheClientsHandshake() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api)
            try await ntlmCredential(api, tenant)
            let session = try await api.session(tenant)
            let iis = [["WWW-Authenticate", "Negotiate"], ["WWW-Authenticate", "NTLM"], ["WWW-Authenticate", #"Basic realm="files.example.com""#]]
            let reply = try await api.response(tenant, session: session, headers: iis)
            #expect(reply.string("disposition") == "useCredential", "\(reply)")
            #expect(reply.string("reasonCode") == "ntlm_handshake")
            #expect(reply["authorization"] is NSNull)
            let credential = try #require(reply["credential"] as? [String: Any])
            #expect(credential["user"] as? String == "svc" && credential["password"] as? String == "pw" && credential["domain"] as? String == "CORP")
            #expect(reply.string("scope") == "session")
            #expect(reply.challengeStatuses == ["unsupportedScheme", "chosen", "lowerPreference"])

            // The server's CHALLENGE message, forwarded by a client that does not read it, is the
            // handshake going on: not a rejection.
            let type2 = [["WWW-Authenticate", "NTLM \(Self.ntlmChallengeMessage)"]]
            let going = try await api.response(tenant, session: session, headers: type2)
            #expect(going.string("disposition") == "useCredential", "\(going)")
            #expect(going["countedRejection"] is NSNull)
            #expect(going.json["remainingAttempts"] as? Int == reply.json["remainingAttempts"] as? Int)
            // A bare NTLM challenge after it is the handshake failing.
            let failed = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]])
            #expect(failed.string("countedRejection") == going.string("decisionId"), "\(failed)")

            // A tenant that keeps passwords home leaves NTLM out of its preference.
            let current = try await api.call(.get, "/v1/policy", key: tenant.adminKey)
            let rules = String(decoding: try JSONSerialization.data(withJSONObject: try #require(current.json["rules"])), as: UTF8.self)
            try await api.policy(tenant, rules: rules, settings: #"{"preferredSchemes": ["Digest SHA-256", "Basic"]}"#)
            let basic = try await api.response(tenant, session: try await api.session(tenant, clientId: "device-2"), headers: iis)
            #expect(basic.string("reasonCode") == "authorization", "\(basic)")
            #expect(basic.authorizationValue?.hasPrefix("Basic ") == true)
            #expect(basic.challengeStatuses == ["unsupportedScheme", "unsupportedScheme", "chosen"])
            // NTLM, left out of the preference, is still named.
            #expect((basic.json["challenges"] as? [[String: Any]])?.map { $0["mechanism"] as? String } == [nil, "NTLM", "Basic"])
        }
    }

    @Test func onlyOneNTLMChallengeMessageContinuesEachRelease() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api, then: #""maxFailures": 20"#)
            try await ntlmCredential(api, tenant)
            let session = try await api.session(tenant)
            var release = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]])
            #expect(release.string("reasonCode") == "ntlm_handshake", "\(release)")

            // What the server sends, and whether it rejects the release before it.
            let challengeMessage = Self.ntlmChallengeMessage
            let steps: [(token: String, rejects: Bool)] = [
                ("Zm9vYmFy", true),  // base64, but no NTLM message
                ("Zm9v-YmFy", true),  // token68, but not base64
                ("TlRMTVNTUAABAAAAB4IIogAAAAAAAAAAAAAAAAAAAAAGAbEdAAAADw==", true),  // NEGOTIATE (type 1)
                ("TlRMTVNTUAADAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==", true),  // AUTHENTICATE (type 3)
                ("TlRMTVNTUAACAAA=", true),  // a CHALLENGE cut short of its type
                (challengeMessage, false),
                // The server's CHALLENGE again: the handshake the first one continued failed.
                (challengeMessage, true),
                // Unpadded, as some servers send it, continuing the release the rejection made.
                ("TlRMTVNTUAACAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", false),
            ]
            for (token, rejects) in steps {
                let reply = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM \(token)"]])
                #expect(reply.string("disposition") == "useCredential", "\(token): \(reply)")
                #expect(reply.string("countedRejection") == (rejects ? release.string("decisionId") : nil), "\(token): \(reply)")
                release = reply
            }
            #expect(try await api.counters(tenant).first?["totalRejections"] as? Int == 6)
        }
    }

    /// Copies of one response forwarded at once (a client replaying its queue, or two instances
    /// behind a balancer): each release goes on at most once, the copies that come too late to
    /// continue it are told so, and each release's rejection is counted once. (Copies that find
    /// the same release failed at the same moment are each answered.)
    @Test func responsesForwardedAtOnceContinueEachReleaseOnce() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api, then: #""maxFailures": 50"#)
            try await ntlmCredential(api, tenant)
            let session = try await api.session(tenant)
            let release = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]])
            #expect(release.string("reasonCode") == "ntlm_handshake", "\(release)")
            let type2 = [["WWW-Authenticate", "NTLM \(Self.ntlmChallengeMessage)"]]
            let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await api.response(tenant, session: session, headers: type2) }
                }
                var replies: [Reply] = []
                for try await reply in group { replies.append(reply) }
                return replies
            }
            for reply in replies where reply.status != 200 {
                #expect(reply.status == 409 && reply.errorCode == "attempt_already_continued", "\(reply)")
            }
            // A release and at most one continuation per attempt (failure count).
            let decisions = try await api.decisions(tenant, session: session)
            let attempts = Dictionary(grouping: decisions) { $0["previousFailureCount"] as? Int ?? -1 }
            #expect(attempts[0]?.count == 2, "\(attempts.mapValues(\.count))")
            let counted = replies.compactMap { $0.status == 200 ? $0.string("countedRejection") : nil }
            #expect(Set(counted).count == counted.count, "\(counted)")
            #expect(try await api.counters(tenant).first?["totalRejections"] as? Int ?? 0 == counted.count)
        }
    }

    /// A copy that read the release before another copy went on from it, and judged it failed
    /// only after, is late too: its rejection would be a second verdict on an attempt that lives
    /// on in the continuation. Naming the release (`previousDecisionId`) makes that order certain.
    @Test func aLateCopyDoesNotRejectAReleaseThatWentOn() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api)
            try await ntlmCredential(api, tenant)
            let session = try await api.session(tenant)
            let release = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]])
            let releaseID = try #require(release.string("decisionId"), "\(release)")
            let continued = try await api.response(
                tenant, session: session, headers: [["WWW-Authenticate", "NTLM \(Self.ntlmChallengeMessage)"]], previousDecisionId: releaseID
            )
            #expect(continued.status == 200 && continued.string("countedRejection") == nil, "\(continued)")

            for token in ["", " \(Self.ntlmChallengeMessage)"] {
                let late = try await api.response(
                    tenant, session: session, headers: [["WWW-Authenticate", "NTLM\(token)"]], previousDecisionId: releaseID
                )
                #expect(late.status == 409 && late.errorCode == "attempt_already_continued", "\(late)")
            }
            #expect(try await api.counters(tenant).first?["totalRejections"] as? Int ?? 0 == 0)
            // The attempt's verdict belongs to the continuation.
            let continuedID = try #require(continued.string("decisionId"))
            let failed = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]], previousDecisionId: continuedID)
            #expect(failed.string("countedRejection") == continuedID, "\(failed)")
        }
    }

    /// A continuation whose decision released nothing (its credential deleted meanwhile; equally
    /// a block reached through another task) leaves the release the task's last: the task's next
    /// 401 answers it, and is not refused as a late copy.
    @Test func aContinuationThatReleasedNothingLeavesTheReleaseToTheNextResponse() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api, then: #""maxFailures": 5"#)
            let credential = try await api.credential(tenant, json: #""host": "files.example.com", "account": "svc", "password": "pw", "domain": "CORP""#)
            let session = try await api.session(tenant)
            let release = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]])
            #expect(release.string("reasonCode") == "ntlm_handshake", "\(release)")

            let deleted = try await api.call(.delete, "/v1/credentials/\(credential)", key: tenant.adminKey)
            #expect(deleted.status == 204, "\(deleted)")
            let going = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM \(Self.ntlmChallengeMessage)"]])
            #expect(going.status == 200 && going.string("disposition") != "useCredential", "\(going)")

            try await ntlmCredential(api, tenant)
            let next = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]])
            #expect(next.status == 200 && next.string("disposition") == "useCredential", "\(next)")
        }
    }

    /// A rejection whose recording failed (503) is counted when the response is forwarded again:
    /// nothing of the failed attempt stands in its way.
    @Test func aRejectionThatFailedIsCountedWhenForwardedAgain() async throws {
        try await TestService.withSideAccess { api, side in
            let (tenant, session) = try await aliceSession(api, then: #""maxFailures": 5"#)
            let basic = [["WWW-Authenticate", #"Basic realm="Files""#]]
            let first = try await api.response(tenant, session: session, headers: basic)
            let released = try #require(first.string("decisionId"), "\(first)")
            try await interceptWrites("UPDATE", on: "decisions", when: "NEW.outcome IS NOT NULL AND OLD.outcome IS NULL", through: side)
            let failed = try await api.response(tenant, session: session, headers: basic)
            #expect(failed.status == 503, "\(failed)")
            try await stopIntercepting(on: "decisions", through: side)
            let again = try await api.response(tenant, session: session, headers: basic)
            #expect(again.status == 200 && again.string("countedRejection") == released, "\(again)")
        }
    }

    /// A copy of a rejection, late (naming the release) or forwarded at the same time as the
    /// first, counts nothing and may start the next attempt a second time; that sibling release
    /// is no continuation, so the server's genuine CHALLENGE message for the latest release still
    /// continues its handshake instead of counting as a second failure.
    @Test func copiesOfARejectionLeaveTheNextHandshakeAlone() async throws {
        try await TestService.withSideAccess { api, side in
            let tenant = try await releasing(api, then: #""maxFailures": 50"#)
            try await ntlmCredential(api, tenant)
            let session = try await api.session(tenant)
            let release = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]])
            let releaseID = try #require(release.string("decisionId"), "\(release)")
            // Both copies read the release before either records its rejection.
            try await interceptWrites(
                "UPDATE", on: "decisions", when: "NEW.outcome IS NOT NULL AND OLD.outcome IS NULL", action: "PERFORM pg_sleep(1)", through: side
            )
            async let first = api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]])
            async let second = api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]])
            let copies = try await [first, second]
            try await stopIntercepting(on: "decisions", through: side)
            #expect(copies.allSatisfy { $0.status == 200 }, "\(copies)")
            #expect(copies.compactMap { $0.string("countedRejection") } == [releaseID], "\(copies)")
            let late = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM"]], previousDecisionId: releaseID)
            #expect(late.status == 200 && late["countedRejection"] is NSNull, "\(late)")

            let going = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", "NTLM \(Self.ntlmChallengeMessage)"]])
            #expect(going.status == 200 && going["countedRejection"] is NSNull && going.string("reasonCode") == "ntlm_handshake", "\(going)")
            #expect(try await api.counters(tenant).first?["totalRejections"] as? Int == 1)
        }
    }

    /// A continuation's claim is given back when its decision or answer fails, but a database
    /// that also fails the give-back leaves it behind. It holds while the continuation could still
    /// be on its way, then no longer: the task's later responses are answered again.
    @Test func aClaimLeftBehindByAFailingDatabaseExpires() async throws {
        try await TestService.withSideAccess { api, side in
            let (tenant, session) = try await aliceSession(api, then: #""maxFailures": 5"#)
            let first = try await api.response(tenant, session: session, headers: digest("n1", stale: false))
            let released = try #require(first.string("decisionId"), "\(first)")
            try await interceptWrites(
                "INSERT OR UPDATE", on: "decisions", when: "TG_OP = 'INSERT' OR (NEW.continued_at IS NULL AND OLD.continued_at IS NOT NULL)", through: side
            )
            let failed = try await api.response(tenant, session: session, headers: digest("n2", stale: true))
            #expect(failed.status == 503, "\(failed)")
            try await stopIntercepting(on: "decisions", through: side)

            let soon = try await api.response(tenant, session: session, headers: digest("n2", stale: true))
            #expect(soon.status == 409 && soon.errorCode == "attempt_already_continued", "\(soon)")
            // A minute on, as far as the claim can tell.
            try await side.withConnection {
                _ = try $0.execute("UPDATE decisions SET continued_at = continued_at - interval '2 minutes' WHERE id = $1::uuid", [.text(released)])
            }
            let rejection = try await api.response(tenant, session: session, headers: digest("n3", stale: false))
            #expect(rejection.status == 200 && rejection.string("countedRejection") == released, "\(rejection)")
        }
    }

    @Test func preferredSchemesAreCheckedWhenThePolicyIsSaved() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            for (settings, code) in [
                (#"{"preferredSchemes": ["Negotiate"]}"#, "invalid_enum_value"), (#"{"preferredSchemes": []}"#, "invalid_policy"),
                (#"{"preferredSchemes": ["Basic", "Basic"]}"#, "invalid_policy"),
                // Spelled as the contract's enum, exactly.
                (#"{"preferredSchemes": ["basic"]}"#, "invalid_enum_value"), (#"{"preferredSchemes": ["digest md5"]}"#, "invalid_enum_value"),
            ] {
                let reply = try await api.call(.put, "/v1/policy", key: tenant.adminKey, json: #"{"version": 0, "settings": \#(settings), "rules": []}"#)
                #expect(reply.status == 400 && reply.errorCode == code, "\(settings): \(reply)")
            }
            let saved = try await api.policy(tenant, rules: "[]", settings: #"{"preferredSchemes": ["Basic", "Digest MD5"]}"#)
            #expect((saved.json["settings"] as? [String: Any])?["preferredSchemes"] as? [String] == ["Basic", "Digest MD5"])
        }
    }

    @Test func authIntNeedsTheBodyAndHashesIt() async throws {
        try await TestService.run { api in
            let (tenant, session) = try await aliceSession(api)
            let headers = [["WWW-Authenticate", #"Digest realm="Files", nonce="int-nonce", qop="auth-int", algorithm=SHA-512-256"#]]
            let missing = try await api.response(tenant, session: session, headers: headers, method: "POST")
            #expect(missing.status == 400 && missing.errorCode == "digest_entity_body_required", "\(missing)")
            let listed = try await api.call(.get, "/v1/decisions", key: tenant.adminKey)
            #expect((listed.json["decisions"] as? [Any])?.isEmpty == true)

            let body = Array(#"{"report": "q3"}"#.utf8)
            let reply = try await api.response(
                tenant, session: session, headers: headers, method: "POST", extraRequest: ["body": Data(body).base64EncodedString()]
            )
            let header = try DigestHeader(try #require(reply.authorizationValue, "\(reply)"))
            #expect(header["qop"] == "auth-int" && header["algorithm"] == "SHA-512-256")
            #expect(header["response"] == header.expectedResponse(password: "pw", method: "POST", body: body))
        }
    }

    /// A response that cannot be answered (every challenge malformed, or an `auth-int` challenge
    /// without the request's body) is refused before the rejection it implies is counted: the 400
    /// leaves the earlier release without an outcome, and the response sent again, answerable,
    /// counts it once.
    @Test func anUnanswerableSecond401CountsNothing() async throws {
        try await TestService.run { api in
            let (tenant, session) = try await aliceSession(api)
            let first = try await api.response(tenant, session: session, headers: digest("n1", stale: false), method: "POST")
            let released = try #require(first.string("decisionId"), "\(first)")
            let authInt = [["WWW-Authenticate", #"Digest realm="Files", nonce="n2", qop="auth-int""#]]
            let missingBody = try await api.response(tenant, session: session, headers: authInt, method: "POST")
            #expect(missingBody.status == 400 && missingBody.errorCode == "digest_entity_body_required", "\(missingBody)")
            let noNonce = [["WWW-Authenticate", #"Digest realm="Files", qop="auth""#]]
            let malformed = try await api.response(tenant, session: session, headers: noNonce, method: "POST")
            #expect(malformed.status == 400 && malformed.errorCode == "missing_challenge_parameter", "\(malformed)")
            #expect(try await decision(api, tenant, released).json["outcome"] is NSNull)
            #expect(try await api.counters(tenant).isEmpty)

            let answered = try await api.response(
                tenant, session: session, headers: authInt, method: "POST", extraRequest: ["body": Data("q3".utf8).base64EncodedString()]
            )
            #expect(answered.status == 200 && answered.string("countedRejection") == released, "\(answered)")
            #expect(try await api.counters(tenant).first?["failures"] as? Int == 1)
        }
    }

    @Test func sessionsAndDecisionsOfOthersAreNotFound() async throws {
        try await TestService.run { api in
            let tenant = try await releasing(api)
            let other = try await api.tenant()
            let session = try await api.session(tenant)
            let basic = [["WWW-Authenticate", #"Basic realm="Files""#]]
            let foreign = try await api.response(other, session: session, headers: basic)
            #expect(foreign.status == 404)
            let unknown = try await api.response(tenant, session: session, headers: basic, previousDecisionId: UUID().uuidString)
            #expect(unknown.status == 404 && unknown.errorCode == "not_found")
            let invalidated = try await api.call(.post, "/v1/sessions/\(session)/invalidate", key: tenant.clientKey, json: #"{"mode": "cancel"}"#)
            #expect(invalidated.status == 200)
            let late = try await api.response(tenant, session: session, headers: basic)
            #expect(late.status == 409 && late.errorCode == "session_invalidated")
        }
    }
}
