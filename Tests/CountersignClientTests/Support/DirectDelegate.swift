@testable import CountersignClient
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A delegate driven by hand: challenges are handed to it as URLSession would, with a real
/// (never resumed) task, so that every path can be taken on purpose.
struct DirectDelegate: Sendable {
    let delegate: CountersignSessionDelegate
    let events: EventLog
    let session: URLSession

    init(
        baseURL: URL,
        key: String = "csk_abcdefghjkmn_test-secret",
        retry: RetryPolicy = RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(10)),
        requestTimeout: Duration = .seconds(5),
        configure: (inout CountersignSessionDelegate.Configuration) -> Void = { _ in }
    ) {
        let events = EventLog()
        var configuration = CountersignSessionDelegate.Configuration(clientId: "device-1", challengeTimeout: .seconds(10), onEvent: events.handler)
        configure(&configuration)
        let client = CountersignClient(configuration: .init(baseURL: baseURL, key: ClientKey(key), requestTimeout: requestTimeout, retry: retry))
        delegate = CountersignSessionDelegate(client: client, configuration: configuration)
        self.events = events
        session = URLSession(configuration: .ephemeral)
    }

    /// A task URLSession would name the challenge after (never resumed).
    func task() -> URLSessionDataTask {
        session.dataTask(with: URL(string: "http://127.0.0.1:1/private")!)
    }

    /// Hands `challenge` to the task-specific delegate method; returns what the completion
    /// handler received, after everything the delegate started has finished.
    func answer(_ challenge: URLAuthenticationChallenge, task: URLSessionTask? = nil) async -> CompletionProbe {
        let probe = CompletionProbe()
        delegate.urlSession(session, task: task ?? self.task(), didReceive: challenge, completionHandler: probe.handler)
        _ = await probe.firstCall()
        await delegate.waitUntilIdle()
        return probe
    }
}
