import Foundation
import Testing

/// Where answers are remembered, and the lookup order documented on `DecisionEngine` and in
/// openapi.yaml (`decideChallenge`).
@Suite("Persistence and lookup order")
struct PersistenceTests {
    @Test func noneIsNeverRemembered() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""persistence": "none""#)
            let session = try await api.session(tenant)
            let first = try await api.decided(tenant, session: session)
            #expect(first.string("disposition") == "useCredential")
            #expect(first.string("persistence") == "none")
            // The policy changes: the session has nothing to fall back on.
            try await api.answerEverything(tenant, "cancelAuthenticationChallenge")
            let second = try await api.decided(tenant, session: session, taskId: "task-2")
            #expect(second.string("disposition") == "cancelAuthenticationChallenge")
            #expect(second.string("source") == "policy")
        }
    }

    @Test func forSessionIsServedFromTheSessionWithoutThePolicy() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant)
            let session = try await api.session(tenant)
            let first = try await api.decided(tenant, session: session)
            #expect(first.string("persistence") == "forSession")
            #expect(first.string("source") == "policy")

            try await api.answerEverything(tenant, "cancelAuthenticationChallenge")
            // Same session, same protection space, another task: the session answers.
            let second = try await api.decided(tenant, session: session, taskId: "task-2")
            #expect(second.string("disposition") == "useCredential")
            #expect(second.credentialPassword == "s3cret")
            #expect(second.string("source") == "session")
            #expect(second.string("persistence") == "forSession")
            #expect(second.ruleID == "intranet")
            // Another protection space of the session asks the policy.
            let otherRealm = try await api.decided(tenant, session: session, space: Space.basic.with { $0.realm = "Other" })
            #expect(otherRealm.string("disposition") == "cancelAuthenticationChallenge")
            // A new session asks the policy.
            let fresh = try await api.session(tenant)
            #expect(try await api.decided(tenant, session: fresh).string("disposition") == "cancelAuthenticationChallenge")
        }
    }

    @Test func forSessionEndsWhenTheCredentialIsRejected() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 5"#)
            let session = try await api.session(tenant)
            let first = try await api.decided(tenant, session: session)
            try await api.answerEverything(tenant, "rejectProtectionSpace")
            #expect(try await api.decided(tenant, session: session, taskId: "task-2").string("source") == "session")
            #expect(try await api.outcome(tenant, decision: try #require(first.string("decisionId")), "rejected", upstreamStatus: 401).status == 200)
            let after = try await api.decided(tenant, session: session, taskId: "task-3")
            #expect(after.string("source") == "policy")
            #expect(after.string("disposition") == "rejectProtectionSpace")
        }
    }

    @Test func forSessionEndsWhenAnAdminMovesTheCredentialElsewhere() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant)
            try await api.releasePolicy(tenant)
            let session = try await api.session(tenant)
            _ = try await api.decided(tenant, session: session)
            #expect(try await api.decided(tenant, session: session, taskId: "task-2").string("source") == "session")

            let moved = try await api.call(.patch, "/v1/credentials/\(credential)", key: tenant.adminKey, json: ["host": "elsewhere.example.com"])
            #expect(moved.status == 200, "\(moved)")
            let after = try await api.decided(tenant, session: session, taskId: "task-3")
            #expect(after.string("source") == "policy")
            #expect(after.string("disposition") != "useCredential", "\(after)")
            #expect(after.credentialPassword == nil)

            // The credential the policy releases in its place is remembered in its place.
            _ = try await api.credential(tenant, account: "replacement", password: "n3w")
            let replaced = try await api.decided(tenant, session: session, taskId: "task-4")
            #expect(replaced.string("source") == "policy")
            #expect(replaced.credentialPassword == "n3w")
            let remembered = try await api.decided(tenant, session: session, taskId: "task-5")
            #expect(remembered.string("source") == "session", "\(remembered)")
            #expect(remembered.credentialPassword == "n3w")
        }
    }

    @Test func permanentFollowsTheClientAcrossSessions() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.releasePolicy(tenant, then: #""clientPersistences": ["permanent"], "persistence": "none""#)
            let first = try await api.session(tenant, clientId: "alice-phone")
            // Nothing to release yet.
            #expect(try await api.decided(tenant, session: first).string("disposition") == "cancelAuthenticationChallenge")
            let submitted = try await api.submit(tenant, session: first, user: "alice", password: "alice-typed", persistence: "permanent")
            #expect(submitted.status == 201)

            let later = try await api.session(tenant, clientId: "alice-phone")
            let again = try await api.decided(tenant, session: later)
            #expect(again.credentialUser == "alice")
            #expect(again.credentialPassword == "alice-typed")
            let someoneElse = try await api.session(tenant, clientId: "bob-phone")
            #expect(try await api.decided(tenant, session: someoneElse).string("disposition") == "cancelAuthenticationChallenge")
        }
    }

    @Test func synchronizableAndAdminCredentialsServeTheWholeTenant() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.releasePolicy(tenant, then: #""clientPersistences": ["synchronizable"], "persistence": "none""#)
            let alice = try await api.session(tenant, clientId: "alice-phone")
            #expect(try await api.submit(tenant, session: alice, user: "shared", password: "shared-typed", persistence: "synchronizable").status == 201)
            let bob = try await api.session(tenant, clientId: "bob-phone")
            #expect(try await api.decided(tenant, session: bob).credentialPassword == "shared-typed")

            let other = try await api.tenant()
            try await api.releasePolicy(other, then: #""persistence": "none""#)
            _ = try await api.credential(other, password: "admin-given")
            for client in ["one", "two", "three"] {
                let session = try await api.session(other, clientId: client)
                #expect(try await api.decided(other, session: session).credentialPassword == "admin-given")
            }
        }
    }

    @Test func lookupOrderSessionThenClientThenSubmittedTenantThenAdmin() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.releasePolicy(tenant, then: #""clientPersistences": ["forSession", "permanent", "synchronizable"], "persistence": "none""#)
            let adminID = try await api.credential(tenant, account: "admin", password: "from-admin")
            let carol = try await api.session(tenant, clientId: "carol")
            let syncID = try #require(try await api.submit(tenant, session: carol, user: "sync", password: "from-carol", persistence: "synchronizable").string("credentialId"))
            let aliceFirst = try await api.session(tenant, clientId: "alice")
            #expect(try await api.submit(tenant, session: aliceFirst, user: "perm", password: "alice-permanent", persistence: "permanent").status == 201)
            let aliceSecond = try await api.session(tenant, clientId: "alice")
            #expect(try await api.submit(tenant, session: aliceSecond, user: "sess", password: "alice-session", persistence: "forSession").status == 201)

            // 1. The session's own.
            let fromSession = try await api.decided(tenant, session: aliceSecond)
            #expect(fromSession.credentialPassword == "alice-session")
            #expect(fromSession.string("source") == "session")
            // 2. This client's permanent one.
            let aliceThird = try await api.session(tenant, clientId: "alice")
            #expect(try await api.decided(tenant, session: aliceThird).credentialPassword == "alice-permanent")
            // 3. The tenant's submitted by a client.
            let dave = try await api.session(tenant, clientId: "dave")
            #expect(try await api.decided(tenant, session: dave).credentialPassword == "from-carol")
            // 4. The admin's.
            #expect(try await api.call(.delete, "/v1/credentials/\(syncID)", key: tenant.adminKey).status == 204)
            let erin = try await api.session(tenant, clientId: "erin")
            let fromAdmin = try await api.decided(tenant, session: erin)
            #expect(fromAdmin.credentialPassword == "from-admin")
            let record = try await api.decisionRecord(tenant, try #require(fromAdmin.string("decisionId")))
            #expect(record.string("credentialId") == adminID)
        }
    }

    @Test func theSessionsMemoryComesBeforeACredentialTheRuleNames() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let adminID = try await api.credential(tenant, account: "admin", password: "from-admin")
            try await api.releasePolicy(tenant, then: #""credentialId": "\#(adminID)""#)
            let session = try await api.session(tenant)
            #expect(try await api.decided(tenant, session: session).credentialPassword == "from-admin")
            #expect(try await api.submit(tenant, session: session, user: "typed", password: "typed-here", persistence: "forSession").status == 201)
            let next = try await api.decided(tenant, session: session, taskId: "task-2")
            #expect(next.credentialPassword == "typed-here")
            #expect(next.string("source") == "session")
            // Another session still gets the rule's.
            let other = try await api.session(tenant)
            #expect(try await api.decided(tenant, session: other).credentialPassword == "from-admin")
        }
    }
}
