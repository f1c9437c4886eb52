@testable import CountersignClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A credential handed to URLSession whose request never got an answer was not judged: the 401
/// that asked for it is still the task's `response`, but it is not the server's verdict on it.
@Suite("A credential whose request got no answer is not counted as rejected", .urlSessionSlot)
struct UnjudgedCredentialTests {
    /// An upstream that answers 401 without `Authorization`, and with one answers only after `delay`.
    static func runSlowUpstream<T: Sendable>(delay: Duration, _ body: @Sendable (URL) async throws -> T) async throws -> T {
        let router = Router()
        router.get("/slow") { request, _ -> Response in
            guard request.headers[.authorization] != nil else {
                return Response(status: .unauthorized, headers: [.wwwAuthenticate: #"Basic realm="Fleet""#], body: .init(byteBuffer: ByteBuffer(string: "who?")))
            }
            try await Task.sleep(for: delay)
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "late welcome")))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in
            guard let port = client.port else { throw CocoaError(.featureUnsupported) }
            return try await body(URL(string: "http://127.0.0.1:\(port)/slow")!)
        }
    }

    /// A delegate that asks `fake` and reports to `events`.
    static func delegate(_ fake: FakeCountersign, _ events: EventLog) -> CountersignSessionDelegate {
        let client = CountersignClient(configuration: .init(baseURL: fake.baseURL, key: ClientKey("csk_abcdefghjkmn_x")))
        return CountersignSessionDelegate(client: client, configuration: .init(clientId: "device-1", onEvent: events.handler))
    }

    static let released = FakeCountersign.Script(challenge: { _ in
        .json(200, FakeCountersign.answerJSON(disposition: "useCredential", credential: #"{"kind": "password", "user": "svc", "password": "pa55", "domain": null}"#))
    })

    @Test("the request sent with the credential times out: cancelled, not rejected")
    func timedOut() async throws {
        try await FakeCountersign.run(Self.released) { fake in
            try await Self.runSlowUpstream(delay: .seconds(4)) { url in
                let events = EventLog()
                let delegate = Self.delegate(fake, events)
                let session = makeSession(delegate, requestTimeout: 1)
                let summary = try await events.run(session, url, timeout: .seconds(20))
                #expect(summary.decisions.map(\.disposition) == [.useCredential])
                #expect(summary.error != nil)
                #expect(summary.outcomes.map(\.report) == [OutcomeReport(outcome: .cancelled)], "status \(String(describing: summary.status)), error \(String(describing: summary.error))")
                await delegate.waitUntilIdle()
                #expect(fake.recorder.bodies("outcome") == [#"{"outcome":"cancelled"}"#])
            }
        }
    }

    @Test("the app cancels the task while the credential's request is under way: cancelled, not rejected")
    func cancelledByTheApp() async throws {
        try await FakeCountersign.run(Self.released) { fake in
            try await Self.runSlowUpstream(delay: .seconds(4)) { url in
                let events = EventLog()
                let delegate = Self.delegate(fake, events)
                let session = makeSession(delegate)
                let task = session.dataTask(with: url)
                task.resume()
                try await events.wait(timeout: .seconds(10)) { !$0.decisions.isEmpty }
                try await Task.sleep(for: .milliseconds(300))
                task.cancel()
                let summary = try await events.completion(of: task.taskIdentifier)
                #expect(summary.decisions.map(\.disposition) == [.useCredential])
                #expect(summary.outcomes.map(\.report) == [OutcomeReport(outcome: .cancelled)], "status \(String(describing: summary.status)), error \(String(describing: summary.error))")
            }
        }
    }
}
