import Foundation
import Testing

@Suite("Policy")
struct PolicyTests {
    static func put(_ api: TestAPI, _ tenant: TestAPI.Tenant, version: Int, rules: String) async throws -> Reply {
        try await api.call(.put, "/v1/policy", key: tenant.adminKey, json: #"{"version": \#(version), "rules": \#(rules)}"#)
    }

    @Test func replacedAsAWholeWithOptimisticConcurrency() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let initial = try await api.call(.get, "/v1/policy", key: tenant.adminKey)
            #expect(initial.int("version") == 0)
            #expect((initial["rules"] as? [Any])?.isEmpty == true)

            let rules = #"[{"id": "no-proxies", "match": {"isProxy": true}, "then": {"disposition": "rejectProtectionSpace"}}]"#
            let first = try await Self.put(api, tenant, version: 0, rules: rules)
            #expect(first.status == 200)
            #expect(first.int("version") == 1)
            #expect(first.string("updatedBy")?.hasPrefix("key:") == true)

            let stale = try await Self.put(api, tenant, version: 0, rules: "[]")
            #expect(stale.status == 409)
            #expect(stale.errorCode == "policy_version_conflict")
            let ahead = try await Self.put(api, tenant, version: 5, rules: "[]")
            #expect(ahead.errorCode == "policy_version_conflict")

            let second = try await Self.put(api, tenant, version: 1, rules: "[]")
            #expect(second.int("version") == 2)
            let old = try await api.call(.get, "/v1/policy/versions/1", key: tenant.adminKey)
            #expect(old.int("version") == 1)
            #expect((old["rules"] as? [[String: Any]])?.first?["id"] as? String == "no-proxies")
            #expect(try await api.call(.get, "/v1/policy/versions/3", key: tenant.adminKey).status == 404)
            for notAVersion in ["abc", "0", "01", "+1", "-1", "1.0", "9223372036854775808"] {
                let reply = try await api.call(.get, "/v1/policy/versions/\(notAVersion)", key: tenant.adminKey)
                #expect(reply.status == 400 && reply.errorCode == "invalid_id", "\(notAVersion): \(reply)")
            }
            #expect(try await api.call(.get, "/v1/policy/versions/9223372036854775807", key: tenant.adminKey).status == 404)
            #expect(try await api.call(.get, "/v1/policy", key: tenant.clientKey).status == 403)
        }
    }

    /// Decoded policies are kept while their row stands: one rewritten without a new version (as
    /// migrations 0020 and 0023 rewrote stored policies) is read anew.
    @Test func aPolicyRewrittenInTheDatabaseIsReadAnew() async throws {
        try await TestService.withSideAccess { api, side in
            let tenant = try await api.tenant()
            #expect(try await Self.put(api, tenant, version: 0, rules: #"[{"id": "first", "match": {}, "then": {"disposition": "performDefaultHandling"}}]"#).status == 200)
            let before = try await api.call(.get, "/v1/policy", key: tenant.adminKey)
            #expect((before.json["rules"] as? [[String: Any]])?.first?["id"] as? String == "first")
            _ = try await side.withConnection { connection in
                try connection.execute(
                    "UPDATE policies SET document = jsonb_set(document, '{rules,0,id}', '\"rewritten\"') WHERE tenant_id = $1::uuid",
                    [.text(tenant.id)]
                )
            }
            let after = try await api.call(.get, "/v1/policy", key: tenant.adminKey)
            #expect(after.int("version") == before.int("version"))
            #expect((after.json["rules"] as? [[String: Any]])?.first?["id"] as? String == "rewritten", "\(after)")
        }
    }

    @Test func concurrentEditsOfOneVersionLetExactlyOneWin() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await Self.put(api, tenant, version: 0, rules: #"[{"id": "r\#(index)", "match": {}, "then": {"disposition": "rejectProtectionSpace"}}]"#).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 409 }.count == 7)
            #expect(try await api.call(.get, "/v1/policy", key: tenant.adminKey).int("version") == 1)
        }
    }

    @Test func validationRefusesAndSavesNothing() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let clientSession = try await api.session(tenant)
            let submitted = try #require(try await api.submit(tenant, session: clientSession, user: "u", password: "p", persistence: "forSession").string("credentialId"))
            let cases: [(String, String)] = [
                (#"[{"id": "r", "match": {"hostname": "a"}, "then": {"disposition": "rejectProtectionSpace"}}]"#, "unknown_field"),
                (#"[{"id": "r", "match": {}, "then": {"disposition": "rejectProtectionSpace", "maxFailure": 3}}]"#, "unknown_field"),
                (#"[{"id": "r", "priority": 1, "match": {}, "then": {"disposition": "rejectProtectionSpace"}}]"#, "unknown_field"),
                (#"[{"id": "r", "match": {"host": "**.example.com"}, "then": {"disposition": "rejectProtectionSpace"}}]"#, "invalid_host_pattern"),
                (#"[{"id": "r", "match": {"host": "a b"}, "then": {"disposition": "rejectProtectionSpace"}}]"#, "invalid_host_pattern"),
                (#"[{"id": "r", "match": {"host": "example.com:443"}, "then": {"disposition": "rejectProtectionSpace"}}]"#, "invalid_host_pattern"),
                (#"[{"id": "r", "match": {}, "then": {"disposition": "useCredential", "credentialId": "\#(UUID())"}}]"#, "unknown_credential_reference"),
                (#"[{"id": "r", "match": {}, "then": {"disposition": "useCredential", "credentialId": "\#(submitted)"}}]"#, "unknown_credential_reference"),
                (#"[{"id": "r", "match": {}, "then": {"disposition": "allow"}}]"#, "invalid_enum_value"),
                (#"[{"id": "r", "match": {"methods": ["Bogus"]}, "then": {"disposition": "rejectProtectionSpace"}}]"#, "invalid_policy"),
                (#"[{"id": "r", "match": {}, "then": {"disposition": "useCredential", "maxFailures": 0}}]"#, "invalid_field"),
                (#"[{"id": "r", "match": {}, "then": {"disposition": "useCredential", "blockedDisposition": "useCredential"}}]"#, "invalid_policy"),
                (#"[{"id": "r", "match": {}, "then": {"disposition": "rejectProtectionSpace"}}, {"id": "r", "match": {}, "then": {"disposition": "rejectProtectionSpace"}}]"#, "invalid_policy"),
                (#"[{"match": {}, "then": {"disposition": "rejectProtectionSpace"}}]"#, "missing_field"),
            ]
            for (rules, code) in cases {
                let reply = try await Self.put(api, tenant, version: 0, rules: rules)
                #expect(reply.status == 400, "\(rules)")
                #expect(reply.errorCode == code, "\(rules): \(reply)")
            }
            let settings = try await api.call(.put, "/v1/policy", key: tenant.adminKey, json: #"{"version": 0, "settings": {"maxSessionTTL": 5}, "rules": []}"#)
            #expect(settings.errorCode == "unknown_field")
            #expect(try await api.call(.get, "/v1/policy", key: tenant.adminKey).int("version") == 0)
        }
    }

    @Test func explainSaysWhatAndWhichRuleAndReleasesNothing() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant, password: "explain-must-not-show")
            try await api.releasePolicy(tenant, then: #""maxFailures": 4"#)
            let explained = try await api.call(
                .post, "/v1/policy/explain", key: tenant.adminKey,
                json: #"{"clientId": "device-1", "challenge": {"taskId": "t", "protectionSpace": {"host": "intranet.example.com", "port": 443, "protocol": "https", "realm": "Intranet", "authenticationMethod": "\#(Method.basic)"}}}"#
            )
            #expect(explained.status == 200)
            #expect(explained.string("disposition") == "useCredential")
            #expect(explained.ruleID == "intranet")
            #expect(explained.string("source") == "policy")
            #expect(explained.int("maxFailures") == 4)
            #expect((explained["credential"] as? [String: Any])?["id"] as? String == id)
            #expect(!explained.text.contains("explain-must-not-show"))
            #expect(!explained.text.contains("\"password\":"))
            // Nothing was recorded.
            let page = try await api.call(.get, "/v1/decisions", key: tenant.adminKey)
            #expect((page["decisions"] as? [Any])?.isEmpty == true)

            let nothing = try await api.call(
                .post, "/v1/policy/explain", key: tenant.adminKey,
                json: #"{"challenge": {"taskId": "t", "protectionSpace": {"host": "elsewhere.org", "port": 443, "authenticationMethod": "\#(Method.basic)"}}}"#
            )
            #expect(nothing.string("disposition") == "performDefaultHandling")
            #expect(nothing.string("source") == "noMatchingRule")
            let unknownSession = try await api.call(
                .post, "/v1/policy/explain", key: tenant.adminKey,
                json: #"{"sessionId": "\#(UUID())", "challenge": {"taskId": "t", "protectionSpace": {"host": "a", "port": 1, "authenticationMethod": "x"}}}"#
            )
            #expect(unknownSession.status == 404)
            #expect(try await api.call(.post, "/v1/policy/explain", key: tenant.adminKey, json: #"{"challenge": {}}"#).errorCode == "missing_field")
            // Fields are named by their path in the explain body, whichever check refuses them.
            let outOfRange = try await api.call(
                .post, "/v1/policy/explain", key: tenant.adminKey,
                json: #"{"challenge": {"taskId": "t", "protectionSpace": {"host": "a", "port": -1, "authenticationMethod": "x"}}}"#
            )
            #expect(outOfRange.errorCode == "invalid_field")
            #expect((outOfRange["error"] as? [String: Any])?["message"] as? String == "'challenge.protectionSpace.port' must be between 0 and 65535")
        }
    }

    @Test func explainSeesBlocksAndSessionMemory() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 1"#)
            let session = try await api.session(tenant)
            let decision = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            let body = #"{"sessionId": "\#(session)", "challenge": {"taskId": "t", "protectionSpace": {"host": "intranet.example.com", "port": 443, "protocol": "https", "realm": "Intranet", "authenticationMethod": "\#(Method.basic)"}}}"#
            let remembered = try await api.call(.post, "/v1/policy/explain", key: tenant.adminKey, json: body)
            #expect(remembered.string("source") == "session")
            #expect(remembered["sessionEnded"] is NSNull)
            try await api.outcome(tenant, decision: decision, "rejected")
            let blocked = try await api.call(.post, "/v1/policy/explain", key: tenant.adminKey, json: body)
            #expect(blocked.string("disposition") == "cancelAuthenticationChallenge")
            #expect(blocked.string("blockedUntil") != nil)
        }
    }

    /// A retry counts its rejection before it is answered: explain says what the retry would
    /// get after that count, counting nothing itself.
    @Test(arguments: [1, 3])
    func explainAnswersARetryAsTheRetryWouldBeAnswered(maxFailures: Int) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": \#(maxFailures), "persistence": "forSession""#)
            let session = try await api.session(tenant)
            var released = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            for failureCount in 1...maxFailures {
                let challenge = #"{"taskId": "task-1", "protectionSpace": {"host": "intranet.example.com", "port": 443, "protocol": "https", "realm": "Intranet", "authenticationMethod": "\#(Method.basic)"}, "proposedCredential": {"user": "svc", "hasPassword": true}, "previousFailureCount": \#(failureCount)}"#
                let explained = try await api.call(.post, "/v1/policy/explain", key: tenant.adminKey, json: #"{"sessionId": "\#(session)", "challenge": \#(challenge)}"#)
                #expect(explained.string("countedRejection") == released, "\(explained)")
                #expect(try await api.decisionRecord(tenant, released)["outcome"] is NSNull, "explain counts nothing")
                let answered = try await api.call(.post, "/v1/sessions/\(session)/challenges", key: tenant.clientKey, json: challenge)
                #expect(answered.string("countedRejection") == released)
                for field in ["disposition", "source"] {
                    #expect(explained.string(field) == answered.string(field), "\(field) at failure \(failureCount): \(explained) against \(answered)")
                }
                #expect((explained["blockedUntil"] is NSNull) == (answered["blockedUntil"] is NSNull))
                released = answered.string("decisionId") ?? ""
            }
            #expect(try await api.counters(tenant).first?["failures"] as? Int == maxFailures)
        }
    }

    @Test func aNewPolicyTakesEffectAtOnce() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            #expect(try await api.decided(tenant, session: session).string("disposition") == "performDefaultHandling")
            try await api.answerEverything(tenant, "rejectProtectionSpace")
            #expect(try await api.decided(tenant, session: session).string("disposition") == "rejectProtectionSpace")
            try await api.answerEverything(tenant, "cancelAuthenticationChallenge")
            #expect(try await api.decided(tenant, session: session).string("disposition") == "cancelAuthenticationChallenge")
        }
    }
}
