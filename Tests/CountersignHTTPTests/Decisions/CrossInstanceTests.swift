import CountersignPostgres
import Foundation
import Testing

/// What an admin changes through one instance holds at once on another that cached the tenant or
/// the session before: every route that acts on the policy, the session or the key reads them as
/// they are, or is checked against them when it writes.
@Suite("Changes through another instance")
struct CrossInstanceTests {
    @Test func submissionsAndSessionLifetimesFollowThePolicyAtOnce() async throws {
        try await TenantAndKeyTests.twoInstances(releasing: "pw") { first, second, tenant in
            try await first.policy(
                tenant,
                rules: #"[{"id": "submit", "match": {"host": "*.example.com"}, "then": {"disposition": "useCredential", "clientPersistences": ["none", "forSession", "permanent"]}}]"#
            )
            let session = try await second.session(tenant)
            let allowed = try await second.submit(tenant, session: session, user: "alice", password: "typed", persistence: "permanent")
            #expect(allowed.status == 201, "\(allowed)")
            // A decision leaves the second instance holding the tenant as it is now.
            _ = try await second.decided(tenant, session: session)

            try await first.policy(
                tenant,
                rules: #"[{"id": "submit", "match": {"host": "*.example.com"}, "then": {"disposition": "useCredential", "clientPersistences": ["none"]}}]"#,
                settings: #"{"maxSessionTTLSeconds": 60}"#
            )
            let tooLong = try await second.openSession(tenant, clientId: "carol", ttlSeconds: 3600)
            #expect(tooLong.status == 400 && tooLong.errorCode == "invalid_ttl", "\(tooLong)")
            let refused = try await second.submit(tenant, session: session, user: "bob", password: "typed", persistence: "permanent")
            #expect(refused.status == 403 && refused.errorCode == "persistence_not_allowed", "\(refused)")
        }
    }

    @Test func aSecurityCheckReportCountsAgainstTheHandlerAsItIsNow() async throws {
        try await TenantAndKeyTests.twoInstances(releasing: "pw") { first, second, tenant in
            let credential = try await first.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            try await first.securityCheckHandlers(tenant, SecurityCheckStateTests.handler(credential, #""maxAttempts": 5, "blockedStateExpirationSec": 600"#))
            let session = try await second.session(tenant)
            let answered = try await second.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 5}}"#)
            #expect(answered.answer("PinCodeAttempts")?["action"] as? String == "submitChallengeAnswer", "\(answered)")

            try await first.securityCheckHandlers(tenant, SecurityCheckStateTests.handler(credential, #""maxAttempts": 1, "blockedStateExpirationSec": 600"#))
            let failure = try await second.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "failure")
            #expect(failure.securityCheckState?["state"] as? String == "blocked", "\(failure)")
        }
    }

    /// The client's state for a check is not moved by a request that is refused: a session ended,
    /// or a key revoked, through the other instance.
    @Test(arguments: ["invalidated", "revoked"])
    func aRefusedSecurityCheckRequestLeavesTheClientsState(change: String) async throws {
        try await TenantAndKeyTests.twoInstances(releasing: "pw") { first, second, tenant in
            let credential = try await first.credential(tenant, host: "mfp.example.com", account: "pin", password: "0000")
            try await first.securityCheckHandlers(tenant, SecurityCheckStateTests.handler(credential, #""maxAttempts": 5, "successStateExpirationSec": 3600"#))
            let session = try await second.session(tenant, clientId: "ios-1")
            _ = try await second.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 5}}"#)
            _ = try await second.reportSecurityCheck(tenant, session: session, check: "PinCodeAttempts", "success")

            if change == "invalidated" {
                #expect(try await first.invalidate(tenant, session: session, mode: "finishTasks").status == 200)
            } else {
                try await first.revokeClientKey(tenant)
            }
            let refused = try await second.securityChecks(tenant, session: session, #"{"PinCodeAttempts": {"remainingAttempts": 5, "errorMsg": "wrong"}}"#)
            #expect(refused.status == (change == "invalidated" ? 409 : 401), "\(refused)")
            let states = try await first.call(.get, "/v1/security-checks/states?clientId=ios-1", key: tenant.adminKey)
            let state = try #require((states.json["states"] as? [[String: Any]])?.first, "\(states)")
            #expect(state["state"] as? String == "success", "\(states)")
            #expect(state["totalFailures"] as? Int == 0)
        }
    }

    /// A retry names the user just released, which counts as that release's rejection: not when
    /// the request comes with a key revoked through the other instance.
    @Test func aRetryWithAKeyRevokedElsewhereCountsNothing() async throws {
        try await TenantAndKeyTests.twoInstances(releasing: "pw") { first, second, tenant in
            let id = try #require(try await first.call(.get, "/v1/credentials", key: tenant.adminKey).json["credentials"] as? [[String: Any]]).first?["id"] as? String
            let session = try await second.session(tenant)
            _ = try await second.decided(tenant, session: session)
            try await first.revokeClientKey(tenant)

            var retry = ChallengeBody(taskId: "task-1")
            retry.previousFailureCount = 1
            retry.proposedCredential = .init(user: "svc", hasPassword: true)
            let refused = try await second.decide(tenant, session: session, retry)
            #expect(refused.status == 401, "\(refused)")
            #expect(try await first.counters(tenant, credential: try #require(id)).isEmpty)
        }
    }

    /// An opened password is kept with the flag it was opened under: turned in the database alone,
    /// the flag makes the kept copy unusable too, not only the sealed one.
    @Test func aPasswordKeptOpenFollowsTheFlagItWasOpenedUnder() async throws {
        try await TestService.withSideAccess { api, side in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant, json: #""host": "files.example.com", "account": "alice", "password": "kept-in", "exportable": false"#)
            try await api.policy(tenant, rules: #"[{"id": "files", "match": {"host": "files.example.com"}, "then": {"disposition": "useCredential", "persistence": "none"}}]"#)
            let session = try await api.session(tenant)
            let digest = try await api.response(tenant, session: session, headers: [["WWW-Authenticate", #"Digest realm="Files", nonce="n-1", qop="auth""#]])
            #expect(digest.authorizationValue?.hasPrefix("Digest ") == true, "the password is open here now: \(digest)")

            try await side.withConnection { try $0.execute("UPDATE credentials SET exportable = true WHERE id = $1", [.uuid(try #require(UUID(uuidString: id)))]) }
            // Any change through the API makes the instance read the tenant again.
            #expect(try await api.call(.patch, "/v1/credentials/\(id)", key: tenant.adminKey, json: ["label": "touched"]).status == 200)
            let refused = try await api.decide(
                tenant, session: session, ChallengeBody(taskId: "task-2", protectionSpace: Space.basic.with { $0.host = "files.example.com"; $0.realm = "Files" })
            )
            #expect(refused.errorCode == "secret_unreadable", "\(refused)")
            #expect(!refused.text.contains("kept-in"))
        }
    }
}
