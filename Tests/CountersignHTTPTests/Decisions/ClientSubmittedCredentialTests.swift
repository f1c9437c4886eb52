import Foundation
import Testing

@Suite("Client-submitted credentials")
struct ClientSubmittedCredentialTests {
    @Test func thePolicySaysWhichPersistencesClientsMayUse() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            // No rule: none and forSession only.
            for persistence in ["permanent", "synchronizable"] {
                let refused = try await api.submit(tenant, session: session, user: "alice", password: "typed", persistence: persistence)
                #expect(refused.status == 403)
                #expect(refused.errorCode == "persistence_not_allowed")
                #expect(!refused.text.contains("typed"))
            }
            #expect(try await api.submit(tenant, session: session, user: "alice", password: "typed", persistence: "forSession").status == 201)

            try await api.releasePolicy(tenant, then: #""clientPersistences": ["none"]"#)
            let forSession = try await api.submit(tenant, session: session, user: "bob", password: "typed", persistence: "forSession")
            #expect(forSession.errorCode == "persistence_not_allowed")
            // `none` is accepted whatever the rule lists, and remembered nowhere.
            try await api.releasePolicy(tenant, then: #""clientPersistences": ["permanent"]"#)
            let none = try await api.submit(tenant, session: session, user: "carol", password: "typed", persistence: "none")
            #expect(none.status == 200 && none["stored"] as? Bool == false, "\(none)")
            // Nothing was stored by the refusals.
            let list = try await api.call(.get, "/v1/credentials", key: tenant.adminKey)
            #expect((list["credentials"] as? [[String: Any]])?.map { $0["account"] as? String } == ["alice"])
        }
    }

    /// A client's tenant-wide submission with an admin credential's very keychain attributes is
    /// a row of its own: it must not replace the admin's secret, which would also reset its
    /// counters and lift its block.
    @Test func aSynchronizableSubmissionNeverReplacesAnAdminCredential() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let saved = try await api.call(
                .post, "/v1/credentials", key: tenant.adminKey,
                json: #"{"host": "intranet.example.com", "port": 443, "protocol": "https", "realm": "Intranet", "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic", "account": "alice", "password": "admin-secret"}"#
            )
            let admin = try #require(saved.string("id"))
            try await api.releasePolicy(tenant, then: #""maxFailures": 1, "clientPersistences": ["synchronizable"]"#)
            let session = try await api.session(tenant)
            let released = try await api.decided(tenant, session: session)
            #expect(released.credentialPassword == "admin-secret")
            try await api.outcome(tenant, decision: try #require(released.string("decisionId")), "rejected", upstreamStatus: 401)
            #expect(try await api.counters(tenant, credential: admin).first?["blockedUntil"] is String)

            let submitted = try await api.submit(tenant, session: session, user: "alice", password: "client-typed", persistence: "synchronizable")
            #expect(submitted.status == 201, "\(submitted)")
            let clientRow = try #require(submitted.string("credentialId"))
            #expect(clientRow != admin)
            #expect(try await api.history(tenant, credential: admin).allSatisfy { $0["event"] as? String != "secret_changed" })
            #expect(try await api.counters(tenant, credential: admin).first?["blockedUntil"] is String, "the admin credential is still blocked")
            // Another client's submission of the same key updates the clients' row, as one synced item.
            let other = try await api.session(tenant, clientId: "device-2")
            let again = try await api.submit(tenant, session: other, user: "alice", password: "typed-again", persistence: "synchronizable")
            #expect(again.status == 200 && again.string("credentialId") == clientRow, "\(again)")
        }
    }

    /// The session keeps its own credentials with what it remembers: an admin's deletion or
    /// change of one must reach it as it reaches the tenant's.
    @Test func aSessionsCredentialDeletedOrChangedByAnAdminIsNoLongerServedAsItWas() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            let space = Space.basic.with { $0.realm = "Typed" }
            let submitted = try await api.submit(tenant, session: session, space: space, user: "carol", password: "typed-by-carol", persistence: "forSession")
            let id = try #require(submitted.string("credentialId"))
            #expect(try await api.decided(tenant, session: session, space: space).credentialPassword == "typed-by-carol")

            let changed = try await api.call(.patch, "/v1/credentials/\(id)", key: tenant.adminKey, json: #"{"password": "changed-by-admin"}"#)
            #expect(changed.status == 200, "\(changed)")
            #expect(try await api.decided(tenant, session: session, taskId: "task-2", space: space).credentialPassword == "changed-by-admin")

            #expect(try await api.call(.delete, "/v1/credentials/\(id)", key: tenant.adminKey).status == 204)
            let after = try await api.decided(tenant, session: session, taskId: "task-3", space: space)
            #expect(after.credentialPassword == nil, "\(after)")
            #expect(after.string("disposition") == "performDefaultHandling", "\(after)")
        }
    }

    /// Another instance still holds the session as it was before the invalidation: it must not
    /// store a credential submitted to it, with any persistence, as this one would not.
    @Test func aSessionInvalidatedThroughAnotherInstanceTakesNoSubmission() async throws {
        let configuration = try await TestService.configuration()
        try await TestService.run(configuration: configuration) { first in
            let tenant = try await first.tenant()
            try await first.releasePolicy(tenant, then: #""clientPersistences": ["none", "forSession", "permanent", "synchronizable"]"#)
            let session = try await first.session(tenant)
            try await TestService.run(configuration: configuration) { second in
                // The second instance has the session in memory: it answered a challenge in it.
                _ = try await second.decided(tenant, session: session)
                #expect(try await first.invalidate(tenant, session: session, mode: "finishTasks").status == 200)
                // `none` too, though nothing would be stored: the session refuses it as on one instance.
                for persistence in ["none", "forSession", "permanent", "synchronizable"] {
                    let submitted = try await second.submit(tenant, session: session, user: "alice", password: "typed", persistence: persistence)
                    #expect(submitted.status == 409 && submitted.errorCode == "session_invalidated", "\(persistence): \(submitted)")
                }
                let list = try await first.call(.get, "/v1/credentials", key: tenant.adminKey)
                #expect((list["credentials"] as? [Any])?.isEmpty == true, "\(list)")
            }
        }
    }

    @Test func noneIsAcceptedAndRememberedNowhere() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.releasePolicy(tenant)
            let session = try await api.session(tenant)
            let reply = try await api.submit(tenant, session: session, user: "alice", password: "typed-once", persistence: "none")
            #expect(reply.status == 200)
            #expect(reply["stored"] as? Bool == false)
            #expect(reply["credentialId"] is NSNull || reply["credentialId"] == nil)
            #expect(reply.string("persistence") == "none")
            let list = try await api.call(.get, "/v1/credentials", key: tenant.adminKey)
            #expect((list["credentials"] as? [Any])?.isEmpty == true)
            let next = try await api.decided(tenant, session: session)
            #expect(next["credential"] is NSNull)
        }
    }

    @Test func forSessionIsKeptByTheSessionAndUpdatedInPlace() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.answerEverything(tenant, "performDefaultHandling")
            let session = try await api.session(tenant, clientId: "alice-phone")
            let created = try await api.submit(tenant, session: session, user: "alice", password: "first", persistence: "forSession")
            #expect(created.status == 201)
            #expect(created["stored"] as? Bool == true)
            #expect(created["created"] as? Bool == true)
            let id = try #require(created.string("credentialId"))

            let served = try await api.decided(tenant, session: session)
            #expect(served.string("disposition") == "useCredential")
            #expect(served.credentialUser == "alice")
            #expect(served.credentialPassword == "first")
            #expect(served.string("source") == "session")

            let view = try await api.call(.get, "/v1/credentials/\(id)", key: tenant.adminKey)
            #expect(view.string("owner") == "session")
            #expect(view.string("ownerSessionId") == session)
            #expect(view.string("ownerClientId") == "alice-phone")
            #expect(!view.text.contains("first"))

            let updated = try await api.submit(tenant, session: session, user: "alice", password: "second", persistence: "forSession")
            #expect(updated.status == 200)
            #expect(updated["created"] as? Bool == false)
            #expect(updated.string("credentialId") == id)
            #expect(try await api.decided(tenant, session: session, taskId: "task-2").credentialPassword == "second")

            // Other sessions of the same client do not see it.
            let other = try await api.session(tenant, clientId: "alice-phone")
            #expect(try await api.decided(tenant, session: other).string("disposition") == "performDefaultHandling")

            // The session's end takes it, and its history says so.
            #expect(try await api.invalidate(tenant, session: session, mode: "finishTasks").status == 200)
            #expect(try await api.call(.get, "/v1/credentials/\(id)", key: tenant.adminKey).status == 404)
            let history = try await api.history(tenant, credential: id)
            #expect(history.first?["event"] as? String == "created" && history.last?["event"] as? String == "deleted", "\(history)")
            #expect(history.last?["actor"] as? String == "session:\(session)")
        }
    }

    @Test func anExpiredSessionsCredentialsAreGoneAtOnce() async throws {
        try await TestService.run(configure: { $0.sessionSweepInterval = .seconds(3600) }) { api in
            let tenant = try await api.tenant()
            try await api.answerEverything(tenant, "performDefaultHandling")
            let opened = try await api.openSession(tenant, clientId: "alice-phone", ttlSeconds: 15)
            let session = try #require(opened.string("id"))
            let created = try await api.submit(tenant, session: session, user: "alice", password: "typed", persistence: "forSession")
            let id = try #require(created.string("credentialId"), "\(created)")
            try await api.waitUntilExpired(opened)

            // The sweep has not run, yet nothing shows the credential or serves it.
            #expect(try await api.call(.get, "/v1/credentials/\(id)", key: tenant.adminKey).status == 404)
            let listed = try await api.call(.get, "/v1/credentials", key: tenant.adminKey)
            #expect((listed.json["credentials"] as? [[String: Any]])?.isEmpty == true, "\(listed)")
            let body = #"{"sessionId": "\#(session)", "challenge": {"taskId": "t", "protectionSpace": {"host": "intranet.example.com", "port": 443, "protocol": "https", "realm": "Intranet", "authenticationMethod": "\#(Method.basic)"}}}"#
            let explained = try await api.call(.post, "/v1/policy/explain", key: tenant.adminKey, json: body)
            #expect(explained.string("source") == "policy", "\(explained)")
            #expect(explained.string("disposition") == "performDefaultHandling")
            // Expired before the sweep recorded it: ended at its expiry.
            let ended = explained["sessionEnded"] as? [String: Any]
            #expect(ended?["invalidationReason"] as? String == "expired", "\(explained)")
            #expect(ended?["invalidatedAt"] as? String == opened.string("expiresAt"))
        }
    }

    @Test func anExpiredSessionsCredentialLeavesADeletedEventAsAnInvalidatedOnes() async throws {
        try await TestService.run(configure: { $0.sessionSweepInterval = .milliseconds(200) }) { api in
            let tenant = try await api.tenant()
            try await api.answerEverything(tenant, "performDefaultHandling")
            let opened = try await api.openSession(tenant, clientId: "alice-phone", ttlSeconds: 15)
            let session = try #require(opened.string("id"))
            let created = try await api.submit(tenant, session: session, user: "alice", password: "typed", persistence: "forSession")
            let id = try #require(created.string("credentialId"), "\(created)")
            try await api.waitUntilExpired(opened)

            // The sweep records the expiry and drops the credential, leaving the event behind.
            var history: [[String: Any]] = []
            for _ in 0..<50 {
                history = try await api.history(tenant, credential: id)
                if history.count > 1 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(history.map { $0["event"] as? String } == ["created", "deleted"], "\(history)")
            #expect(history.last?["actor"] as? String == "session:\(session)")
        }
    }

    @Test func badSubmissionsAreRefused() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            let trust = try await api.submit(tenant, session: session, space: Space.basic.with { $0.authenticationMethod = Method.serverTrust }, user: "a", password: "b", persistence: "forSession")
            #expect(trust.status == 400)
            #expect(try await api.submit(tenant, session: session, user: "", password: "b", persistence: "forSession").errorCode == "invalid_field")
            #expect(try await api.submit(tenant, session: session, user: "a", password: String(repeating: "x", count: 4097), persistence: "forSession").errorCode == "invalid_field")
            #expect(try await api.submit(tenant, session: session, user: "a", password: "b", persistence: "forever").errorCode == "invalid_enum_value")
            #expect(try await api.submit(tenant, session: UUID().uuidString, user: "a", password: "b", persistence: "forSession").status == 404)
            let admin = try await api.call(
                .post, "/v1/sessions/\(session)/credentials", key: tenant.adminKey,
                json: #"{"protectionSpace": {"host": "a", "port": 1, "authenticationMethod": "\#(Method.basic)"}, "user": "a", "password": "b", "persistence": "none"}"#
            )
            #expect(admin.status == 403)
        }
    }
}
