import Synchronization

/// At most `limit` runs of some work at once; the others wait their turn, in order, without
/// holding a thread, and at most `maxWaiting` of them: beyond that, ``run(_:)`` refuses at once.
///
/// A turn passes straight from the run that ends to the next in line, so a newcomer never jumps
/// the queue.
public final class Turns: Sendable {
    /// ``Turns/run(_:)`` found `maxWaiting` runs already waiting.
    public struct QueueFull: Error {}

    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let maxWaiting: Int
    private let state: Mutex<State>

    public init(_ limit: Int, maxWaiting: Int = .max) {
        precondition(limit > 0)
        self.maxWaiting = maxWaiting
        state = Mutex(State(free: limit))
    }

    /// Runs waiting for a turn.
    public var waiting: Int { state.withLock { $0.waiting.count } }

    /// `body`'s result, run in a turn; throws ``QueueFull`` when the queue is full.
    public func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await take()
        defer { pass() }
        return try await body()
    }

    private func take() async throws {
        enum Admission { case now, queued, refused }
        let admission: Admission = state.withLock { state in
            if state.free > 0 {
                state.free -= 1
                return .now
            }
            return state.waiting.count < maxWaiting ? .queued : .refused
        }
        switch admission {
        case .now:
            return
        case .refused:
            throw QueueFull()
        case .queued:
            await withCheckedContinuation { continuation in
                let admitted = state.withLock { state in
                    // A turn may have come free between the two locks.
                    if state.free > 0 {
                        state.free -= 1
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if admitted { continuation.resume() }
            }
        }
    }

    private func pass() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
