@testable import CountersignClient
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real URLSession against a real Basic server while Countersign fails: the task still ends,
/// each challenge answered once by the fallback.
@Suite("A real URLSession while Countersign fails", .urlSessionSlot)
struct FailingServiceTests {
    enum Failure: String, Sendable, CaseIterable {
        case down, serverError, malformedJSON
    }

    @Test("the task ends with the 401 and one fallback", arguments: Failure.allCases)
    func taskEnds(_ failure: Failure) async throws {
        try await BasicAuthServer.run(user: "u", password: "p") { server in
            let check: @Sendable (URL, FakeCountersign?) async throws -> Void = { baseURL, fake in
                let events = EventLog()
                let client = CountersignClient(configuration: .init(baseURL: baseURL, key: ClientKey("csk_abcdefghjkmn_x"), retry: RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(5))))
                let delegate = CountersignSessionDelegate(client: client, configuration: .init(clientId: "device-1", onEvent: events.handler))
                let session = makeSession(delegate)
                let summary = try await events.run(session, server.url, timeout: .seconds(20))
                #expect(summary.status == 401)
                #expect((summary.error as? URLError)?.code == defaultHandlingWithoutCredential.expectedErrorCode)
                #expect(summary.decisions.isEmpty)
                #expect(summary.fallbacks.count == 1)
                #expect(events.fallbacks.count == 1)
                // The upstream server saw the one request without credentials, nothing else.
                #expect(server.log.authorizations == [nil])
                delegate.finishTasksAndInvalidate(session)
                await delegate.waitUntilIdle()
                // The session opened before the challenge failed still ends with the URLSession.
                if let fake { #expect(fake.recorder.bodies("invalidate") == [#"{"mode":"finishTasks"}"#]) }
            }
            switch failure {
            case .down:
                try await check(URL(string: "http://127.0.0.1:1")!, nil)
            case .serverError:
                try await FakeCountersign.run(.init(challenge: { _ in .error(500, "internal_error") })) { fake in
                    try await check(fake.baseURL, fake)
                }
            case .malformedJSON:
                try await FakeCountersign.run(.init(challenge: { _ in .json(200, "{\"decisionId\": [") })) { fake in
                    try await check(fake.baseURL, fake)
                }
            }
        }
    }
}

extension URLSession.AuthChallengeDisposition {
    /// The error a task ends with after this answer to its only challenge.
    var expectedErrorCode: URLError.Code? {
        self == .cancelAuthenticationChallenge ? .cancelled : nil
    }
}
