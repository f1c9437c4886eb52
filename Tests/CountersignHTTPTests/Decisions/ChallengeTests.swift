import Foundation
import Testing

@Suite("Challenges")
struct ChallengeTests {
    @Test func noRuleIsDefaultHandlingNeverAnError() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            let session = try await api.session(tenant)
            let reply = try await api.decided(tenant, session: session)
            #expect(reply.string("disposition") == "performDefaultHandling")
            #expect(reply["credential"] is NSNull)
            #expect(reply.string("persistence") == "none")
            #expect(reply.string("scope") == "task")
            #expect(reply["remainingAttempts"] is NSNull)
            #expect(reply["blockedUntil"] is NSNull)
            #expect(reply["rule"] is NSNull)
            #expect(reply.string("source") == "noMatchingRule")
            #expect(UUID(uuidString: reply.string("decisionId") ?? "") != nil)
            // The decision was recorded.
            let record = try await api.decisionRecord(tenant, try #require(reply.string("decisionId")))
            #expect(record.string("disposition") == "performDefaultHandling")
            #expect(record.string("taskId") == "task-1")
        }
    }

    @Test func anUnknownMethodIsDefaultHandling() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.answerEverything(tenant, "cancelAuthenticationChallenge")
            let session = try await api.session(tenant)
            let reply = try await api.decided(tenant, session: session, space: Space.basic.with { $0.authenticationMethod = "NSURLAuthenticationMethodFutureThing" })
            #expect(reply.string("disposition") == "performDefaultHandling")
            #expect(reply.string("source") == "unsupportedMethod")
            #expect(reply["rule"] is NSNull)
            // A known method gets the rule.
            #expect(try await api.decided(tenant, session: session).string("disposition") == "cancelAuthenticationChallenge")
        }
    }

    @Test func aReleasedCredentialCarriesEverythingTheClientNeeds() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, password: "pa55-w0rd")
            try await api.releasePolicy(tenant, then: #""maxFailures": 4"#)
            let session = try await api.session(tenant)
            let reply = try await api.decided(tenant, session: session)
            #expect(reply.string("disposition") == "useCredential")
            let credential = try #require(reply["credential"] as? [String: Any])
            #expect(credential["kind"] as? String == "password")
            #expect(credential["user"] as? String == "svc")
            #expect(credential["password"] as? String == "pa55-w0rd")
            #expect(credential["domain"] is NSNull)
            #expect(reply.string("persistence") == "forSession")
            #expect(reply.string("scope") == "task")
            #expect(reply.int("remainingAttempts") == 4)
            #expect(reply.ruleID == "intranet")
            #expect((reply["rule"] as? [String: Any])?["name"] as? String == "Intranet")
            #expect(reply.string("source") == "policy")
            #expect(reply.string("reason")?.isEmpty == false)
            #expect(reply["countedRejection"] is NSNull)
        }
    }

    @Test func defaultIsBasicOverHTTP() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, extra: ["authenticationMethod": Method.basic])
            try await api.policy(
                tenant,
                rules: #"[{"id": "basic", "match": {"methods": ["\#(Method.basic)"]}, "then": {"disposition": "useCredential", "persistence": "none"}}]"#
            )
            let session = try await api.session(tenant)
            let viaDefault = try await api.decided(tenant, session: session, space: Space.basic.with { $0.authenticationMethod = Method.default })
            #expect(viaDefault.string("disposition") == "useCredential")
            #expect(viaDefault.credentialUser == "svc")
            let record = try await api.decisionRecord(tenant, try #require(viaDefault.string("decisionId")))
            #expect((record["protectionSpace"] as? [String: Any])?["authenticationMethod"] as? String == Method.basic)
            // Over FTP, Default is not Basic.
            let ftp = try await api.decided(tenant, session: session, space: Space.basic.with { $0.authenticationMethod = Method.default; $0.protocol = "ftp"; $0.port = 21 })
            #expect(ftp.string("disposition") == "performDefaultHandling")
        }
    }

    @Test(arguments: [Method.ntlm, Method.negotiate])
    func sessionWideMethodsHoldForTheWholeSession(method: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credentialID = try await api.credential(tenant, account: "CORP\\svc", extra: ["domain": "CORP"])
            try await api.releasePolicy(tenant)
            let session = try await api.session(tenant)
            let space = Space.basic.with { $0.authenticationMethod = method; $0.realm = nil }
            let first = try await api.decided(tenant, session: session, taskId: "task-1", space: space)
            #expect(first.string("disposition") == "useCredential")
            #expect(first.string("scope") == "session")
            #expect((first["credential"] as? [String: Any])?["domain"] as? String == "CORP")

            // Even with the policy now refusing, another task of the session gets the same answer.
            try await api.answerEverything(tenant, "rejectProtectionSpace")
            let second = try await api.decided(tenant, session: session, taskId: "task-2", space: space)
            #expect(second.string("disposition") == "useCredential")
            #expect(second.string("source") == "session")
            #expect(second.string("scope") == "session")
            let record = try await api.decisionRecord(tenant, try #require(second.string("decisionId")))
            #expect(record.string("credentialId") == credentialID)

            // A new session asks the policy.
            let other = try await api.session(tenant)
            #expect(try await api.decided(tenant, session: other, space: space).string("disposition") == "rejectProtectionSpace")
        }
    }

    @Test func sessionWideRefusalsAreRememberedToo() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.answerEverything(tenant, "rejectProtectionSpace")
            let session = try await api.session(tenant)
            let space = Space.basic.with { $0.authenticationMethod = Method.negotiate }
            #expect(try await api.decided(tenant, session: session, taskId: "a", space: space).string("disposition") == "rejectProtectionSpace")
            try await api.answerEverything(tenant, "performDefaultHandling")
            let again = try await api.decided(tenant, session: session, taskId: "b", space: space)
            #expect(again.string("disposition") == "rejectProtectionSpace")
            #expect(again.string("source") == "session")
            // Task-specific methods follow the policy at once.
            #expect(try await api.decided(tenant, session: session, taskId: "c").string("disposition") == "performDefaultHandling")
        }
    }

    @Test func noFittingCredentialGetsTheFailureDisposition() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, host: "other.example.com")
            try await api.releasePolicy(tenant, then: #""failureDisposition": "rejectProtectionSpace""#)
            let session = try await api.session(tenant)
            let reply = try await api.decided(tenant, session: session)
            #expect(reply.string("disposition") == "rejectProtectionSpace")
            #expect(reply["credential"] is NSNull)
            #expect(reply.ruleID == "intranet")
        }
    }

    @Test func proxiesAndOriginsAreKeptApart() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, account: "origin-account")
            _ = try await api.credential(tenant, host: "proxy.example.com", account: "proxy-account", extra: [:])
            let proxy = try await api.call(
                .post, "/v1/credentials", key: tenant.adminKey,
                json: #"{"host": "proxy.example.com", "account": "real-proxy", "password": "p", "isProxy": true}"#
            )
            #expect(proxy.status == 201)
            try await api.releasePolicy(tenant, then: #""persistence": "none""#)
            let session = try await api.session(tenant)
            let origin = try await api.decided(tenant, session: session)
            #expect(origin.credentialUser == "origin-account")
            let viaProxy = try await api.decided(tenant, session: session, space: Space.basic.with { $0.host = "proxy.example.com"; $0.isProxy = true; $0.port = 3128 })
            #expect(viaProxy.credentialUser == "real-proxy")
        }
    }

    @Test func badChallengesAreRefusedWithClearCodes() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            let path = "/v1/sessions/\(session)/challenges"
            let cases: [(String, String)] = [
                (#"{"protectionSpace": {"host": "a", "port": 1, "authenticationMethod": "x"}}"#, "missing_field"),
                (#"{"taskId": "t", "protectionSpace": {"host": "a", "port": 70000, "authenticationMethod": "x"}}"#, "invalid_field"),
                (#"{"taskId": "t", "protectionSpace": {"host": "", "port": 1, "authenticationMethod": "x"}}"#, "invalid_field"),
                (#"{"taskId": "t", "protectionSpace": {"host": "a", "port": "443", "authenticationMethod": "x"}}"#, "invalid_field_type"),
                (#"{"taskId": "t", "protectionSpace": {"host": "a", "port": 1, "authenticationMethod": "x", "colour": "red"}}"#, "unknown_field"),
                (#"{"taskId": "t", "previousFailureCount": -1, "protectionSpace": {"host": "a", "port": 1, "authenticationMethod": "x"}}"#, "invalid_field"),
                (#"{"taskId": "t", "proposedCredential": {"user": "u", "password": "p"}, "protectionSpace": {"host": "a", "port": 1, "authenticationMethod": "x"}}"#, "unknown_field"),
                (#"{"taskId": "t", "failureResponse": {"status": 42}, "protectionSpace": {"host": "a", "port": 1, "authenticationMethod": "x"}}"#, "invalid_field"),
                ("{not json", "malformed_json"),
            ]
            for (body, code) in cases {
                let reply = try await api.call(.post, path, key: tenant.clientKey, json: body)
                #expect(reply.status == 400, "\(body)")
                #expect(reply.errorCode == code, "\(body): \(reply)")
            }
            let nobody = try await api.call(.post, "/v1/sessions/\(UUID())/challenges", key: tenant.clientKey, json: ChallengeBody())
            #expect(nobody.status == 404)
            let admin = try await api.call(.post, path, key: tenant.adminKey, json: ChallengeBody())
            #expect(admin.status == 403)
            // None of these was recorded.
            let page = try await api.call(.get, "/v1/decisions", key: tenant.adminKey)
            #expect((page["decisions"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func manyConcurrentChallengesInOneSessionAllCommit() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant)
            let session = try await api.session(tenant)
            // Every one of these writes the session's memory (distinct realms), so concurrent
            // batches of the decision writer update the same session row.
            let statuses = try await withThrowingTaskGroup(of: (Int, String?, String?).self) { group in
                for index in 0..<60 {
                    group.addTask {
                        let reply = try await api.decide(tenant, session: session, ChallengeBody(taskId: "task-\(index)", protectionSpace: Space.basic.with { $0.realm = "realm-\(index % 20)" }))
                        return (reply.status, reply.credentialUser, reply.errorCode)
                    }
                }
                return try await group.reduce(into: [(Int, String?, String?)]()) { $0.append($1) }
            }
            #expect(statuses.count == 60)
            #expect(statuses.allSatisfy { $0.0 == 200 && $0.1 == "svc" }, "\(statuses.filter { $0.0 != 200 })")
            let page = try await api.call(.get, "/v1/decisions?limit=1000&sessionId=\(session)", key: tenant.adminKey)
            #expect((page["decisions"] as? [Any])?.count == 60)
        }
    }
}
