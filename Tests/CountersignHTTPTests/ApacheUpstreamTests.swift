import Foundation
import Testing

/// The done-when test of raw responses: a real server that nobody here wrote. Apache httpd
/// answers 401 with its own challenge; Countersign turns that into the header; Apache says 200.
/// With a wrong stored password Apache says 401 again, which Countersign counts, until the
/// credential blocks.
@Suite("Apache httpd as the upstream server")
struct ApacheUpstreamTests {
    static let basicUser = (user: "alice", password: "wonder land")
    static let digestUser = (user: "bob", password: "builder: can we fix it?")

    enum Location: String, CaseIterable, Sendable {
        case basic, digest

        var path: String { "/\(rawValue)/index.html" }
        var scheme: String { self == .basic ? "Basic" : "Digest" }
        var user: (user: String, password: String) { self == .basic ? ApacheUpstreamTests.basicUser : ApacheUpstreamTests.digestUser }
    }

    /// A tenant that releases the credential of `user` with `password` for the server at `port`.
    func tenant(_ api: TestAPI, port: Int, user: String, password: String, maxFailures: Int) async throws -> (TestAPI.Tenant, String) {
        let tenant = try await api.tenant()
        try await api.policy(
            tenant,
            rules: #"[{"id": "apache", "match": {"host": "127.0.0.1", "port": \#(port)}, "then": {"disposition": "useCredential", "maxFailures": \#(maxFailures)}}]"#
        )
        _ = try await api.credential(tenant, host: "127.0.0.1", account: user, password: password)
        return (tenant, try await api.session(tenant))
    }

    @Test("Apache's real 401 is answered and the header gets 200", arguments: Location.allCases)
    func theHeaderOpensTheDoor(location: Location) async throws {
        try await ApacheServer.run(basic: Self.basicUser, digest: Self.digestUser) { apache in
            try await TestService.run { api in
                let (tenant, session) = try await tenant(api, port: apache.port, user: location.user.user, password: location.user.password, maxFailures: 3)

                let challenge = try await apache.get(location.path)
                #expect(challenge.status == 401)
                #expect(challenge.headers.contains { $0[0].lowercased() == "www-authenticate" && $0[1].hasPrefix(location.scheme) })

                let answer = try await api.response(tenant, session: session, headers: challenge.headers, url: apache.baseURL + location.path)
                #expect(answer.string("disposition") == "useCredential", "\(answer)")
                #expect(answer.authorizationName == "Authorization")
                #expect(!String(decoding: answer.body, as: UTF8.self).contains(location.user.password))
                let header = try #require(answer.authorizationValue)
                #expect(header.hasPrefix(location.scheme + " "))

                let opened = try await apache.get(location.path, authorization: header)
                #expect(opened.status == 200, "Apache refused \(header.prefix(40))...")
                #expect(opened.body == "\(location.rawValue) ok\n")

                if location == .digest {
                    // The same nonce again, from another task: Apache accepts the next count too.
                    let again = try await api.response(tenant, session: session, taskId: "task-2", headers: challenge.headers, url: apache.baseURL + location.path)
                    let second = try DigestHeader(try #require(again.authorizationValue))
                    #expect(second["nc"] == "00000002")
                    let againHeader = try #require(again.authorizationValue)
                    #expect(try await apache.get(location.path, authorization: againHeader).status == 200)
                }

                let reported = try await api.call(
                    .post, "/v1/decisions/\(try #require(answer.string("decisionId")))/outcome", key: tenant.clientKey,
                    json: #"{"outcome": "accepted", "upstreamStatus": 200}"#
                )
                #expect(reported.status == 200)
            }
        }
    }

    @Test("a wrong stored password is a counted rejection per 401, and blocks at maxFailures", arguments: Location.allCases)
    func aWrongPasswordBlocks(location: Location) async throws {
        try await ApacheServer.run(basic: Self.basicUser, digest: Self.digestUser) { apache in
            try await TestService.run { api in
                let (tenant, session) = try await tenant(api, port: apache.port, user: location.user.user, password: "not-the-password", maxFailures: 2)
                let url = apache.baseURL + location.path

                var response = try await apache.get(location.path)
                #expect(response.status == 401)
                var answer = try await api.response(tenant, session: session, headers: response.headers, url: url)
                #expect(answer.json["remainingAttempts"] as? Int == 2, "\(answer)")
                var previous = try #require(answer.string("decisionId"))

                for remaining in [1, 0] {
                    let header = try #require(answer.authorizationValue, "\(answer)")
                    response = try await apache.get(location.path, authorization: header)
                    #expect(response.status == 401, "Apache accepted a wrong password")
                    answer = try await api.response(tenant, session: session, headers: response.headers, url: url)
                    #expect(answer.string("countedRejection") == previous, "\(answer)")
                    #expect(answer.json["remainingAttempts"] as? Int == remaining)
                    previous = try #require(answer.string("decisionId"))
                }
                #expect(answer.string("disposition") == "cancelAuthenticationChallenge")
                #expect(answer.string("reasonCode") == "credential_blocked")
                #expect(answer["authorization"] is NSNull)
                #expect(answer.string("blockedUntil") != nil)

                let counters = try await api.call(.get, "/v1/counters", key: tenant.adminKey)
                let counter = try #require((counters.json["counters"] as? [[String: Any]])?.first, "\(counters)")
                #expect(counter["failures"] as? Int == 2 && counter["blockedUntil"] is String)
            }
        }
    }

    @Test func anExpiredNonceIsStaleNotARejection() async throws {
        try await ApacheServer.run(basic: Self.basicUser, digest: Self.digestUser) { apache in
            try await TestService.run { api in
                let (tenant, session) = try await tenant(api, port: apache.port, user: Self.digestUser.user, password: Self.digestUser.password, maxFailures: 1)
                let path = "/stale/index.html"
                let first = try await apache.get(path)
                let answer = try await api.response(tenant, session: session, headers: first.headers, url: apache.baseURL + path)
                let header = try #require(answer.authorizationValue, "\(answer)")

                // Past the nonce's twelve-second lifetime Apache refuses the right password as stale.
                try await Task.sleep(for: .milliseconds(12500))
                var refused = try await apache.get(path, authorization: header)
                var opened: (status: Int, headers: [[String]], body: String)?
                // On a loaded machine the renewed nonce may expire too before it is used: every
                // round the service allows for one attempt must be stale again, never a rejection
                // (maxFailures is 1). A fourth would be the server refusing the credential.
                for _ in 0..<3 where opened == nil {
                    #expect(refused.status == 401)
                    #expect(refused.headers.contains { $0[0].lowercased() == "www-authenticate" && $0[1].contains("stale=true") }, "\(refused.headers)")
                    let renewed = try await api.response(tenant, session: session, headers: refused.headers, url: apache.baseURL + path)
                    #expect(renewed.string("disposition") == "useCredential", "\(renewed)")
                    #expect(renewed.string("reasonCode") == "stale_nonce")
                    #expect(renewed["countedRejection"] is NSNull)
                    #expect(renewed.json["remainingAttempts"] as? Int == 1)
                    let renewedHeader = try #require(renewed.authorizationValue)
                    let result = try await apache.get(path, authorization: renewedHeader)
                    if result.status == 200 { opened = result } else { refused = result }
                }
                let page = try #require(opened, "the renewed header never got through")
                #expect(page.body == "stale ok\n")
            }
        }
    }
}
