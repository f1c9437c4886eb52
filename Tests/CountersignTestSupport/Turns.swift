import Synchronization

/// At most `limit` runs of some heavy work at once; the others wait their turn, in order, without
/// holding a thread.
///
/// Waiting on threads of their own (``TestDatabase/onOwnThread(_:)``) no longer throttles
/// anything: the fifteen-odd private clusters of a run then ran `initdb` at the same moment, next
/// to every service of the run, and on two cores services under test missed 5 s timeouts.
public final class Turns: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    public init(_ limit: Int) {
        precondition(limit > 0)
        state = Mutex(State(free: limit))
    }

    public func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await take()
        defer { pass() }
        return try await body()
    }

    private func take() async {
        await withCheckedContinuation { continuation in
            let admitted = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    private func pass() {
        // The turn goes straight to the next in line, so `free` stays as it is.
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
