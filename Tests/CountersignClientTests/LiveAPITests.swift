@testable import CountersignClient
import Foundation
import Testing

/// The API client against the real service: every client operation, its answers and its errors.
@Suite("The API client against a real Countersign", .urlSessionSlot)
struct LiveAPITests {
    @Test("sessions, challenges, submitted credentials and outcomes")
    func operations() async throws {
        try await LiveCountersign.run { service in
            let tenant = try await service.admin.tenant()
            try await service.admin.policy(
                tenant,
                rules: """
                    [{"id": "files", "match": {"host": "files.example.com"},
                      "then": {"disposition": "useCredential", "persistence": "forSession", "clientPersistences": ["none", "forSession"]}}]
                    """
            )
            let client = CountersignClient(baseURL: service.baseURL, key: ClientKey(tenant.clientKey))

            let session = try await client.openSession(OpenSessionRequest(clientId: "ios-7F3A", label: "main URLSession", ttlSeconds: 600))
            #expect(session.clientId == "ios-7F3A")
            #expect(session.label == "main URLSession")
            #expect(session.state == .active)
            #expect(session.expiresAt.timeIntervalSince(session.createdAt) == 600)
            #expect(try await client.getSession(session.id) == session)

            let space = ProtectionSpace(host: "files.example.com", port: 443, protocolName: "https", realm: "Files", authenticationMethod: .httpDigest)
            // Nothing stored yet: the rule finds no credential.
            let before = try await client.decideChallenge(Challenge(taskId: "1", protectionSpace: space), in: session.id)
            #expect(before.credential == nil)

            let submission = try await client.submitCredential(
                SubmitCredentialRequest(protectionSpace: space, user: "alice", password: "typed-by-alice", persistence: .forSession),
                in: session.id
            )
            #expect(submission.stored)
            #expect(submission.created)
            #expect(submission.persistence == .forSession)
            await #expect(throws: CountersignClientError.self) {
                try await client.submitCredential(SubmitCredentialRequest(protectionSpace: space, user: "alice", password: "x", persistence: .synchronizable), in: session.id)
            }

            let answer = try await client.decideChallenge(Challenge(taskId: "2", protectionSpace: space), in: session.id)
            #expect(answer.disposition == .useCredential)
            #expect(answer.credential?.user == "alice")
            #expect(answer.credential?.password == "typed-by-alice")
            // A credential the session keeps is served from the session's memory.
            #expect(answer.source == .session)

            let outcome = try await client.reportOutcome(OutcomeReport(outcome: .accepted, upstreamStatus: 200), for: answer.decisionId)
            #expect(outcome.decision.id == answer.decisionId)
            #expect(outcome.decision.outcome == .accepted)
            #expect(outcome.decision.taskId == "2")
            #expect(outcome.counted == false)
            // Idempotent; a different outcome afterwards is a conflict with its code.
            _ = try await client.reportOutcome(OutcomeReport(outcome: .accepted, upstreamStatus: 200), for: answer.decisionId)
            do throws(CountersignClientError) {
                _ = try await client.reportOutcome(OutcomeReport(outcome: .rejected, upstreamStatus: 401), for: answer.decisionId)
                Issue.record("no conflict")
            } catch {
                #expect(error.status == 409)
                #expect(error.serviceCode == CountersignClientError.Code.outcomeConflict)
            }

            let invalidated = try await client.invalidateSession(session.id, mode: .finishTasks)
            #expect(invalidated.state == .invalidated)
            #expect(invalidated.invalidationMode == .finishTasks)
            #expect(invalidated.invalidationReason == .explicit)
            do throws(CountersignClientError) {
                _ = try await client.decideChallenge(Challenge(taskId: "3", protectionSpace: space), in: session.id)
                Issue.record("decided in an invalidated session")
            } catch {
                #expect(error.serviceCode == CountersignClientError.Code.sessionInvalidated)
            }
        }
    }

    @Test("a wrong key and a missing session are service errors with their codes")
    func errors() async throws {
        try await LiveCountersign.run { service in
            let tenant = try await service.admin.tenant()
            let stranger = CountersignClient(baseURL: service.baseURL, key: ClientKey("csk_abcdefghjkmn_not-a-real-key-0123456789abcdef"))
            do throws(CountersignClientError) {
                _ = try await stranger.openSession(OpenSessionRequest(clientId: "d"))
                Issue.record("opened with a wrong key")
            } catch {
                #expect(error.status == 401)
                #expect(error.serviceCode == CountersignClientError.Code.invalidAPIKey)
            }
            let client = CountersignClient(baseURL: service.baseURL, key: ClientKey(tenant.clientKey))
            do throws(CountersignClientError) {
                _ = try await client.getSession(UUID())
                Issue.record("found a session that does not exist")
            } catch {
                #expect(error == .service(status: 404, code: "not_found", message: error.serviceMessage ?? ""))
            }
            let admin = CountersignClient(baseURL: service.baseURL, key: ClientKey(tenant.adminKey))
            do throws(CountersignClientError) {
                _ = try await admin.openSession(OpenSessionRequest(clientId: "d"))
                Issue.record("an admin key opened a session")
            } catch {
                #expect(error.status == 403)
                #expect(error.serviceCode == "insufficient_role")
            }
        }
    }
}

extension CountersignClientError {
    var serviceMessage: String? {
        if case .service(_, _, let message) = self { return message }
        return nil
    }
}
