@testable import CountersignClient
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension EventLog {
    /// Resumes a delegate-driven data task and waits for the delegate to see it complete.
    func run(_ session: URLSession, _ url: URL, timeout: Duration = .seconds(30)) async throws -> CountersignSessionDelegate.TaskSummary {
        let task = session.dataTask(with: url)
        task.resume()
        return try await completion(of: task.taskIdentifier, timeout: timeout)
    }

    /// Waits until `condition` holds for the events seen so far (or `timeout` passes).
    func wait(timeout: Duration = .seconds(30), until condition: (EventLog) -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !condition(self), clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func completion(of taskIdentifier: Int, timeout: Duration = .seconds(30)) async throws -> CountersignSessionDelegate.TaskSummary {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if let summary = completedTasks.first(where: { $0.taskIdentifier == taskIdentifier }) { return summary }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("task \(taskIdentifier) did not complete within \(timeout)")
        throw CancellationError()
    }
}

/// A URLSession with `delegate`, ephemeral so that nothing is remembered between tests.
func makeSession(_ delegate: CountersignSessionDelegate, requestTimeout: TimeInterval = 20) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = requestTimeout
    return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
}
