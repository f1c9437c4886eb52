import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The tasks the delegate answered, watched until they complete. FoundationNetworking calls
/// `urlSession(_:task:didCompleteWithError:)` only for tasks made with `dataTask(with:)` and
/// `resume()`; a task behind `data(for:)`, `data(from:)` or a completion handler ends without a
/// word to the delegate. Unreported, a credential its retries got accepted would keep the
/// rejections those retries counted, and block the whole fleet's credential a few tasks later.
final class TaskWatcher: Sendable {
    private struct State {
        var tasks: [Int: URLSessionTask] = [:]
        var polling = false
    }

    private let state = Mutex(State())
    private let interval: Duration

    /// Completed tasks are seen at most `interval` after they complete.
    init(interval: Duration = .milliseconds(250)) {
        self.interval = interval
    }

    /// Watches `task` until it completes; then `completed` runs, once. One delegate watches, so
    /// every call passes the same `completed`: the poll keeps the one it started with.
    func watch(_ task: URLSessionTask, completed: @escaping @Sendable (URLSessionTask) -> Void) {
        let startPolling = state.withLock { state in
            state.tasks[task.taskIdentifier] = task
            defer { state.polling = true }
            return !state.polling
        }
        if startPolling { Task { await self.poll(completed) } }
    }

    /// URLSession said `task` completed: nothing left to watch for.
    func forget(_ taskIdentifier: Int) {
        _ = state.withLock { $0.tasks.removeValue(forKey: taskIdentifier) }
    }

    /// Hands every watched task that has completed to `completed`, now.
    func sweep(_ completed: @Sendable (URLSessionTask) -> Void) {
        let done = state.withLock { state in
            let done = state.tasks.values.filter { $0.state == .completed }
            for task in done { state.tasks[task.taskIdentifier] = nil }
            return done
        }
        for task in done { completed(task) }
    }

    private func poll(_ completed: @escaping @Sendable (URLSessionTask) -> Void) async {
        while true {
            try? await Task.sleep(for: interval)
            sweep(completed)
            let more = state.withLock { state in
                if state.tasks.isEmpty { state.polling = false }
                return state.polling
            }
            if !more { return }
        }
    }
}
