import Foundation
import Testing

@Suite("Sessions")
struct SessionTests {
    static func date(_ value: Any?) throws -> Date {
        try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(try #require(value as? String))
    }

    @Test func openAndRead() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let opened = try await api.openSession(tenant, clientId: "ios-7F3A", ttlSeconds: 120, label: "main URLSession")
            #expect(opened.status == 201)
            #expect(opened.string("clientId") == "ios-7F3A")
            #expect(opened.string("label") == "main URLSession")
            #expect(opened.string("tenantId") == tenant.id)
            #expect(opened.string("state") == "active")
            #expect(opened["invalidatedAt"] is NSNull)
            let lifetime = try Self.date(opened["expiresAt"]).timeIntervalSince(try Self.date(opened["createdAt"]))
            #expect(abs(lifetime - 120) < 0.01)

            let id = try #require(opened.string("id"))
            let read = try await api.call(.get, "/v1/sessions/\(id)", key: tenant.clientKey)
            #expect(read.status == 200)
            #expect(read.string("expiresAt") == opened.string("expiresAt"))

            let defaulted = try await api.openSession(tenant)
            let defaultLifetime = try Self.date(defaulted["expiresAt"]).timeIntervalSince(try Self.date(defaulted["createdAt"]))
            #expect(abs(defaultLifetime - 3600) < 0.01)
            #expect(defaulted["label"] is NSNull)
        }
    }

    @Test func lifetimesFollowThePolicySettings() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.policy(tenant, rules: "[]", settings: #"{"defaultSessionTTLSeconds": 90, "maxSessionTTLSeconds": 600}"#)
            let defaulted = try await api.openSession(tenant)
            #expect(defaulted.status == 201)
            let lifetime = try Self.date(defaulted["expiresAt"]).timeIntervalSince(try Self.date(defaulted["createdAt"]))
            #expect(abs(lifetime - 90) < 0.01)
            #expect(try await api.openSession(tenant, ttlSeconds: 600).status == 201)
            for ttl in [601, 0, -5] {
                let refused = try await api.openSession(tenant, ttlSeconds: ttl)
                #expect(refused.status == 400)
                #expect(refused.errorCode == "invalid_ttl")
            }
            for ttl in ["1e20", "9223372036854775808"] {
                let refused = try await api.call(.post, "/v1/sessions", key: tenant.clientKey, json: #"{"clientId": "d", "ttlSeconds": \#(ttl)}"#)
                #expect(refused.errorCode == "invalid_ttl", "\(ttl): \(refused)")
            }
        }
    }

    @Test func badRequestsAreRefused() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let missing = try await api.call(.post, "/v1/sessions", key: tenant.clientKey, json: ["label": "x"])
            #expect(missing.errorCode == "missing_field")
            let unknown = try await api.call(.post, "/v1/sessions", key: tenant.clientKey, json: #"{"clientId": "a", "ttl": 5}"#)
            #expect(unknown.errorCode == "unknown_field")
            let empty = try await api.call(.post, "/v1/sessions", key: tenant.clientKey, json: ["clientId": ""])
            #expect(empty.errorCode == "invalid_field")
            let admin = try await api.call(.post, "/v1/sessions", key: tenant.adminKey, json: ["clientId": "a"])
            #expect(admin.status == 403)
            #expect(admin.errorCode == "insufficient_role")
            let nobody = try await api.call(.get, "/v1/sessions/\(UUID())", key: tenant.clientKey)
            #expect(nobody.status == 404)
            let notAnID = try await api.call(.get, "/v1/sessions/nope", key: tenant.clientKey)
            #expect(notAnID.status == 400)
            #expect(notAnID.errorCode == "invalid_id")
            let session = try await api.session(tenant)
            let badMode = try await api.invalidate(tenant, session: session, mode: "later")
            #expect(badMode.errorCode == "invalid_enum_value")
        }
    }

    @Test func finishTasksRefusesNewChallengesButTakesOutcomes() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant)
            let session = try await api.session(tenant)
            let released = try await api.decided(tenant, session: session)
            #expect(released.string("disposition") == "useCredential")
            let submitted = try await api.submit(tenant, session: session, space: Space.basic.with { $0.host = "typed.example.com" }, user: "alice", password: "typed", persistence: "forSession")
            let submittedID = try #require(submitted.string("credentialId"))

            let invalidated = try await api.invalidate(tenant, session: session, mode: "finishTasks")
            #expect(invalidated.status == 200)
            #expect(invalidated.string("state") == "invalidated")
            #expect(invalidated.string("invalidationReason") == "explicit")
            #expect(invalidated.string("invalidationMode") == "finishTasks")
            #expect(invalidated.string("invalidatedAt") != nil)
            let read = try await api.call(.get, "/v1/sessions/\(session)", key: tenant.clientKey)
            #expect(read.string("invalidatedAt") == invalidated.string("invalidatedAt"))

            let refused = try await api.decide(tenant, session: session, ChallengeBody(taskId: "task-2"))
            #expect(refused.status == 409)
            #expect(refused.errorCode == "session_invalidated")
            #expect(!refused.text.contains("s3cret"))
            let submitRefused = try await api.submit(tenant, session: session, user: "bob", password: "typed", persistence: "forSession")
            #expect(submitRefused.status == 409)
            #expect(submitRefused.errorCode == "session_invalidated")

            // Outcomes of decisions already made are still taken.
            let outcome = try await api.outcome(tenant, decision: try #require(released.string("decisionId")), "accepted", upstreamStatus: 200)
            #expect(outcome.status == 200)
            #expect((outcome["decision"] as? [String: Any])?["outcome"] as? String == "accepted")

            // The session's own credentials and memory are gone.
            #expect(try await api.call(.get, "/v1/credentials/\(submittedID)", key: tenant.adminKey).status == 404)
            let explained = try await api.call(
                .post, "/v1/policy/explain", key: tenant.adminKey,
                json: #"{"sessionId": "\#(session)", "challenge": {"taskId": "t", "protectionSpace": {"host": "intranet.example.com", "port": 443, "protocol": "https", "realm": "Intranet", "authenticationMethod": "\#(Method.basic)"}}}"#
            )
            #expect(explained.string("source") == "policy")
            let ended = explained["sessionEnded"] as? [String: Any]
            #expect(ended?["invalidatedAt"] as? String == invalidated.string("invalidatedAt"))
            #expect(ended?["invalidationReason"] as? String == "explicit")

            // Invalidating again changes nothing.
            let again = try await api.invalidate(tenant, session: session, mode: "finishTasks")
            #expect(again.string("invalidatedAt") == invalidated.string("invalidatedAt"))
        }
    }

    /// A retry naming the released user is how the client reports a rejection: an ended session
    /// takes it as it takes an explicit report, and still answers nothing new.
    @Test(arguments: ["finishTasks", "cancel"])
    func aRetryAfterInvalidationIsStillTheRejectionOfTheEarlierDecision(mode: String) async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credential = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 5"#)
            let session = try await api.session(tenant)
            let released = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            #expect(try await api.invalidate(tenant, session: session, mode: mode).status == 200)

            let retry = try await api.decide(
                tenant, session: session,
                ChallengeBody(proposedCredential: .init(user: "svc", hasPassword: true), previousFailureCount: 1, failureResponse: .init(status: 401))
            )
            #expect(retry.status == 409 && retry.errorCode == "session_invalidated", "\(retry)")
            let earlier = try await api.decisionRecord(tenant, released)
            let failures = try await api.counters(tenant, credential: credential).first?["failures"] as? Int ?? 0
            if mode == "finishTasks" {
                #expect(earlier.string("outcome") == "rejected")
                #expect(failures == 1)
                // Reported again, explicitly: counted once.
                let reported = try await api.outcome(tenant, decision: released, "rejected", upstreamStatus: 401)
                #expect(reported.status == 200 && reported["counted"] as? Bool == false, "\(reported)")
            } else {
                #expect(earlier.string("outcome") == "cancelled")
                #expect(failures == 0)
            }
        }
    }

    @Test func cancelCancelsPendingDecisionsAtOnce() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant)
            let session = try await api.session(tenant)
            let answered = try #require(try await api.decided(tenant, session: session, taskId: "a").string("decisionId"))
            let pending = try #require(try await api.decided(tenant, session: session, taskId: "b").string("decisionId"))
            let other = try await api.session(tenant, clientId: "device-2")
            let elsewhere = try #require(try await api.decided(tenant, session: other).string("decisionId"))
            #expect(try await api.outcome(tenant, decision: answered, "accepted").status == 200)

            let cancelled = try await api.invalidate(tenant, session: session, mode: "cancel")
            #expect(cancelled.status == 200)
            #expect(cancelled.string("invalidationMode") == "cancel")
            #expect(cancelled.string("invalidationReason") == "explicit")

            let record = try await api.decisionRecord(tenant, pending)
            #expect(record.string("outcome") == "cancelled")
            #expect(record.string("outcomeSource") == "session")
            #expect(try await api.decisionRecord(tenant, answered).string("outcome") == "accepted")
            #expect(try await api.decisionRecord(tenant, elsewhere)["outcome"] is NSNull)

            // A cancelled decision cannot be reported rejected any more; the same report is fine.
            let conflict = try await api.outcome(tenant, decision: pending, "rejected", upstreamStatus: 401)
            #expect(conflict.status == 409)
            #expect(conflict.errorCode == "outcome_conflict")
            let same = try await api.outcome(tenant, decision: pending, "cancelled")
            #expect(same.status == 200)
            #expect(same["counted"] as? Bool == false)
            #expect(try await api.counters(tenant).isEmpty)
            #expect(try await api.decide(tenant, session: session).errorCode == "session_invalidated")
        }
    }

    @Test func cancelAfterFinishTasksStillCancelsWhatIsPending() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            let pending = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            let finished = try await api.invalidate(tenant, session: session, mode: "finishTasks")
            #expect(try await api.decisionRecord(tenant, pending)["outcome"] is NSNull)
            let cancelled = try await api.invalidate(tenant, session: session, mode: "cancel")
            #expect(cancelled.string("invalidationMode") == "cancel")
            #expect(cancelled.string("invalidatedAt") == finished.string("invalidatedAt"))
            #expect(try await api.decisionRecord(tenant, pending).string("outcome") == "cancelled")
        }
    }

    @Test func expiredSessionsBehaveAsInvalidated() async throws {
        try await TestService.run(configure: { $0.sessionSweepInterval = .milliseconds(200) }) { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""clientPersistences": ["forSession"]"#)
            let opened = try await api.openSession(tenant, ttlSeconds: 20)
            let session = try #require(opened.string("id"))
            let released = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            let submitted = try await api.submit(
                tenant, session: session, space: Space.basic.with { $0.host = "typed.example.com" }, user: "alice", password: "typed", persistence: "forSession"
            )
            let submittedID = try #require(submitted.string("credentialId"))
            #expect(try await api.call(.get, "/v1/credentials/\(submittedID)", key: tenant.adminKey).status == 200)

            try await api.waitUntilExpired(opened)
            let read = try await api.call(.get, "/v1/sessions/\(session)", key: tenant.clientKey)
            #expect(read.string("state") == "invalidated")
            #expect(read.string("invalidationReason") == "expired")
            #expect(read.string("invalidatedAt") == opened.string("expiresAt"))
            let refused = try await api.decide(tenant, session: session)
            #expect(refused.status == 409)
            #expect(refused.errorCode == "session_invalidated")
            #expect(try await api.outcome(tenant, decision: released, "rejected", upstreamStatus: 401).status == 200)

            // The sweeper drops what the session held.
            var gone = false
            for _ in 0..<50 where !gone {
                gone = try await api.call(.get, "/v1/credentials/\(submittedID)", key: tenant.adminKey).status == 404
                if !gone { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(gone)
            // An explicit invalidation after expiry keeps the reason.
            let late = try await api.invalidate(tenant, session: session, mode: "finishTasks")
            #expect(late.string("invalidationReason") == "expired")
        }
    }
}
