@testable import CountersignClient
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds the challenges URLSession would hand a delegate, and counts how the delegate answers.
enum Challenges {
    /// A sender URLSession would provide; the delegate API never uses it.
    final class Sender: NSObject, URLAuthenticationChallengeSender {
        func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
        func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
        func cancel(_ challenge: URLAuthenticationChallenge) {}
        func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
        func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
    }

    /// A Basic challenge from `host`:`port` as a 401 raises it.
    static func basic(
        host: String = "127.0.0.1",
        port: Int = 8443,
        realm: String = "Fleet",
        previousFailureCount: Int = 0,
        proposed: URLCredential? = nil,
        headers: [String: String] = [:]
    ) -> URLAuthenticationChallenge {
        let space = URLProtectionSpace(host: host, port: port, protocol: "http", realm: realm, authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let url = URL(string: "http://\(host):\(port)/private")!
        var allHeaders = ["WWW-Authenticate": #"Basic realm="\#(realm)""#]
        allHeaders.merge(headers) { _, new in new }
        let response = HTTPURLResponse(url: url, statusCode: 401, httpVersion: "HTTP/1.1", headerFields: allHeaders)
        return URLAuthenticationChallenge(
            protectionSpace: space,
            proposedCredential: proposed,
            previousFailureCount: previousFailureCount,
            failureResponse: response,
            error: nil,
            sender: Sender()
        )
    }

    /// A challenge with another method (server trust, client certificate...), with no response.
    static func method(_ method: String, host: String = "127.0.0.1", port: Int = 8443) -> URLAuthenticationChallenge {
        let space = URLProtectionSpace(host: host, port: port, protocol: "https", realm: nil, authenticationMethod: method)
        return URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: 0, failureResponse: nil, error: nil, sender: Sender())
    }
}

/// A completion handler that records every call, to check it is called exactly once.
final class CompletionProbe: Sendable {
    struct Call: Sendable {
        var disposition: URLSession.AuthChallengeDisposition
        var user: String?
        var password: String?
        var persistence: URLCredential.Persistence?
    }

    private let calls = Mutex<[Call]>([])

    var handler: @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void {
        { disposition, credential in
            self.calls.withLock {
                $0.append(Call(disposition: disposition, user: credential?.user, password: credential?.password, persistence: credential?.persistence))
            }
        }
    }

    var all: [Call] { calls.withLock { $0 } }

    /// Waits until the handler was called at least once (or `timeout` passes).
    func firstCall(timeout: Duration = .seconds(10)) async -> Call? {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if let first = all.first { return first }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return all.first
    }
}

/// Collects a delegate's events.
final class EventLog: Sendable {
    private let events = Mutex<[CountersignSessionDelegate.Event]>([])

    var handler: @Sendable (CountersignSessionDelegate.Event) -> Void {
        { event in self.events.withLock { $0.append(event) } }
    }

    var all: [CountersignSessionDelegate.Event] { events.withLock { $0 } }

    var sessionsOpened: [CountersignSession] {
        all.compactMap { if case .sessionOpened(let session) = $0 { session } else { nil } }
    }

    var decisions: [DecisionSummary] {
        all.compactMap { if case .decided(let decision) = $0 { decision } else { nil } }
    }

    var fallbacks: [FallbackSummary] {
        all.compactMap { if case .fellBack(let fallback) = $0 { fallback } else { nil } }
    }

    var completedTasks: [CountersignSessionDelegate.TaskSummary] {
        all.compactMap { if case .taskCompleted(let summary) = $0 { summary } else { nil } }
    }

    var reported: [(UUID, OutcomeReport, Bool)] {
        all.compactMap { if case .outcomeReported(let id, let report, let counted) = $0 { (id, report, counted) } else { nil } }
    }

    var reportFailures: [(UUID, CountersignClientError)] {
        all.compactMap { if case .outcomeReportFailed(let id, _, let error) = $0 { (id, error) } else { nil } }
    }

    var invalidated: [CountersignSession] {
        all.compactMap { if case .sessionInvalidated(let session) = $0 { session } else { nil } }
    }
}

/// What Linux's URLSession gets for `performDefaultHandling` without a proposed credential.
let defaultHandlingWithoutCredential: URLSession.AuthChallengeDisposition = {
    #if canImport(FoundationNetworking)
    .cancelAuthenticationChallenge
    #else
    .performDefaultHandling
    #endif
}()
