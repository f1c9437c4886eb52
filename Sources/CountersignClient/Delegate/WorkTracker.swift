import Synchronization

/// The delegate's background work (answers being fetched, outcomes being reported), so that it
/// can be awaited: before invalidating the Countersign session, and by apps and tests that want
/// every report sent (``CountersignSessionDelegate/waitUntilIdle()``).
final class WorkTracker: Sendable {
    private struct State {
        var next: UInt64 = 0
        var running: [UInt64: Task<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// Runs `operation` in a new task and tracks it until it ends.
    func start(_ operation: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            let id = state.next
            state.next += 1
            // The task removes itself under the same lock, so it cannot finish before it is stored.
            state.running[id] = Task {
                await operation()
                self.finish(id)
            }
        }
    }

    /// Returns when no tracked work is left, including work started while waiting.
    func waitForAll() async {
        while true {
            let running = state.withLock { Array($0.running.values) }
            if running.isEmpty { return }
            for task in running { await task.value }
        }
    }

    private func finish(_ id: UInt64) {
        _ = state.withLock { $0.running.removeValue(forKey: id) }
    }
}
