import CountersignPostgres
import CountersignTestSupport
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
            let credentials = try await first.call(.get, "/v1/credentials", key: tenant.adminKey).json["credentials"] as? [[String: Any]]
            let id: String = try #require(credentials?.first?["id"] as? String)
            let session = try await second.session(tenant)
            _ = try await second.decided(tenant, session: session)
            try await first.revokeClientKey(tenant)

            var retry = ChallengeBody(taskId: "task-1")
            retry.previousFailureCount = 1
            retry.proposedCredential = .init(user: "svc", hasPassword: true)
            let refused = try await second.decide(tenant, session: session, retry)
            #expect(refused.status == 401, "\(refused)")
            #expect(try await first.counters(tenant, credential: id).isEmpty)
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

            let turned = try await side.withConnection { try $0.execute("UPDATE credentials SET exportable = true WHERE id = $1", [.uuid(try #require(UUID(uuidString: id)))]) }
            #expect(turned == 1)
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

/// Instances keep the keys they read for a while (`COUNTERSIGN_API_KEY_CACHE_SECONDS`, ten minutes
/// here), but hear of revocations and tenant switches made through any instance, and refuse the
/// key from then on, on every route.
@Suite("Access changes through another instance")
struct AccessChangeTests {
    /// The first reply of `second` to opening a session (a route that releases no secret) that is
    /// not 201, waiting at most `within` for it.
    static func refusal(from second: TestAPI, _ tenant: TestAPI.Tenant, within: Duration = .seconds(5)) async throws -> Reply? {
        let deadline = ContinuousClock.now + within
        while ContinuousClock.now < deadline {
            let reply = try await second.openSession(tenant)
            if reply.status != 201 { return reply }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    @Test func aKeyRevokedThroughAnotherInstanceIsRefusedEverywhere() async throws {
        try await TenantAndKeyTests.twoInstances(releasing: "pw") { first, second, tenant in
            _ = try await second.session(tenant)
            try await first.revokeClientKey(tenant)
            let refused = try await Self.refusal(from: second, tenant)
            #expect(refused?.status == 401 && refused?.errorCode == "invalid_api_key", "\(String(describing: refused))")
        }
    }

    @Test func aTenantDisabledThroughAnotherInstanceIsRefusedEverywhere() async throws {
        try await TenantAndKeyTests.twoInstances(releasing: "pw") { first, second, tenant in
            _ = try await second.session(tenant)
            #expect(try await first.call(.post, "/v1/tenants/\(tenant.id)/disable", key: TestService.operatorKey).status == 200)
            let refused = try await Self.refusal(from: second, tenant)
            #expect(refused?.status == 403 && refused?.errorCode == "tenant_disabled", "\(String(describing: refused))")

            #expect(try await first.call(.post, "/v1/tenants/\(tenant.id)/enable", key: TestService.operatorKey).status == 200)
            let deadline = ContinuousClock.now + .seconds(5)
            var reopened = try await second.openSession(tenant)
            while reopened.status != 201, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                reopened = try await second.openSession(tenant)
            }
            #expect(reopened.status == 201, "\(reopened)")
        }
    }

    /// A revocation announced while an instance's listening connection was down is lost to it:
    /// once it listens again it forgets every key it kept, and so refuses the revoked one.
    @Test func listeningAgainForgetsTheKeysKeptMeanwhile() async throws {
        try await TenantAndKeyTests.twoInstances(releasing: "pw") { first, second, tenant, side in
            _ = try await second.session(tenant)
            try await Self.endListeningConnections(side)
            try await first.revokeClientKey(tenant)
            let refused = try await Self.refusal(from: second, tenant, within: .seconds(10))
            #expect(refused?.status == 401 && refused?.errorCode == "invalid_api_key", "\(String(describing: refused))")
        }
    }

    /// What a client writes through an instance that has not heard that its key was revoked, or
    /// its tenant disabled (its listening connection is down, and it keeps keys for ten minutes),
    /// is refused from the database's state, with nothing written: an outcome (reported, or a raw
    /// 403's) counts for the whole fleet, and a submission may replace what every client of the
    /// tenant is released.
    @Test(arguments: ["revoked", "disabled"])
    func writesWithAccessEndedUnheardOfAreRefused(change: String) async throws {
        try await TenantAndKeyTests.twoInstances(releasing: "pw") { first, second, tenant, side in
            let credentials = try await first.call(.get, "/v1/credentials", key: tenant.adminKey).json["credentials"] as? [[String: Any]]
            let credential: String = try #require(credentials?.first?["id"] as? String)
            let session = try await second.session(tenant)
            let decision = try #require(try await second.decided(tenant, session: session).string("decisionId"))
            let intranet = "https://intranet.example.com/"
            let raw = try await second.response(tenant, session: session, taskId: "raw", headers: [["WWW-Authenticate", #"Basic realm="Intranet""#]], url: intranet)
            let rawDecision = try #require(raw.string("decisionId"), "\(raw)")
            try await Self.endListeningConnections(side)
            let (status, code) = change == "revoked" ? (401, "invalid_api_key") : (403, "tenant_disabled")
            if change == "revoked" {
                try await first.revokeClientKey(tenant)
            } else {
                #expect(try await first.call(.post, "/v1/tenants/\(tenant.id)/disable", key: TestService.operatorKey).status == 200)
            }

            let outcome = try await second.outcome(tenant, decision: decision, "rejected", upstreamStatus: 401)
            #expect(outcome.status == status && outcome.errorCode == code, "\(outcome)")
            let submitted = try await second.submit(tenant, session: session, user: "mallory", password: "typed", persistence: "forSession")
            #expect(submitted.status == status && submitted.errorCode == code, "\(submitted)")
            let opened = try await second.openSession(tenant)
            #expect(opened.status == status && opened.errorCode == code, "\(opened)")
            let forbidden = try await second.response(tenant, session: session, taskId: "raw", status: 403, headers: [], url: intranet)
            #expect(forbidden.status == status && forbidden.errorCode == code, "\(forbidden)")

            if change == "disabled" {
                #expect(try await first.call(.post, "/v1/tenants/\(tenant.id)/enable", key: TestService.operatorKey).status == 200)
            }
            #expect(try await first.counters(tenant, credential: credential).isEmpty)
            for id in [decision, rawDecision] {
                let recorded = try await first.call(.get, "/v1/decisions/\(id)", key: tenant.adminKey)
                #expect(recorded.status == 200 && recorded.json["outcome"] is NSNull, "\(recorded)")
            }
        }
    }

    /// Ends every instance's listening connection, and waits until its backend is gone, so that
    /// what is changed next is announced to no one.
    static func endListeningConnections(_ side: PostgresPool) async throws {
        // The second instance's listener may still be connecting (or reconnecting, after an
        // earlier call): both are ended, or what follows could be heard.
        let bothListening = try await eventually(timeout: .seconds(15)) {
            try await side.withConnection { connection in
                try connection.query(
                    "SELECT count(*)::int8 AS n FROM pg_stat_activity WHERE application_name = 'countersign listener' AND datname = current_database() AND state = 'idle'"
                ).rows[0].decode("n", as: Int.self)
            } == 2
        }
        try #require(bothListening, "the two instances' listening connections are not both up")
        let listeners = try await side.withConnection { connection in
            try connection.query(
                "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'countersign listener' AND datname = current_database()"
            ).rows.map { try $0.decode("pid", as: Int.self) }
        }
        #expect(listeners.count == 2)
        for _ in 0..<100 {
            let left = try await side.withConnection { connection in
                try connection.query("SELECT count(*)::int8 AS n FROM pg_stat_activity WHERE pid = ANY($1::int[])", [.text("{\(listeners.map(String.init).joined(separator: ","))}")])
                    .rows[0].decode("n", as: Int.self)
            }
            if left == 0 { return }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
