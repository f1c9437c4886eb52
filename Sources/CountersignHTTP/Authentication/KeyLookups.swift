import CountersignCore
import CountersignStorage
import Synchronization

/// The database reads behind API keys the cache does not hold, kept from crowding out decisions.
///
/// Requests presenting the same uncached key share one read (an instance that just started sees
/// a whole fleet's first requests at once), unless the key cache forgot something between them
/// (a revocation: the earlier read may have found the key unrevoked), and reads of distinct keys
/// run at most `limit` at a
/// time with at most `maxWaiting` queued behind them: a client spraying made-up keys costs at
/// most `limit` of the pool's connections, and beyond the queue it is told `service_busy`.
final class KeyLookups: Sendable {
    typealias Find = @Sendable (String) async throws -> APIKeyStore.Authenticated?

    /// One read: of a lookup id, by requests that came after the same number of forgets.
    private struct Read: Hashable {
        var lookupID: String
        var forgets: Int
    }

    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
        var inFlight: [Read: Task<APIKeyStore.Authenticated?, any Error>] = [:]
    }

    private let find: Find
    private let limit: Int
    private let maxWaiting: Int
    private let state = Mutex(State())

    init(limit: Int, maxWaiting: Int, find: @escaping Find) {
        precondition(limit > 0)
        self.limit = limit
        self.maxWaiting = maxWaiting
        self.find = find
    }

    /// Reads waiting for a turn.
    var queued: Int { state.withLock { $0.waiting.count } }

    /// The key stored under `lookupID` (or that there is none), read once for all who ask at once
    /// after the same number of the key cache's forgets (`forgets`).
    func key(lookupID: String, readAfter forgets: Int = 0) async throws -> APIKeyStore.Authenticated? {
        let read = Read(lookupID: lookupID, forgets: forgets)
        let task = state.withLock { state in
            if let running = state.inFlight[read] { return running }
            let task = Task { try await self.read(read) }
            state.inFlight[read] = task
            return task
        }
        return try await task.value
    }

    private func read(_ read: Read) async throws -> APIKeyStore.Authenticated? {
        defer { state.withLock { _ = $0.inFlight.removeValue(forKey: read) } }
        try await takeTurn()
        defer { passTurn() }
        return try await find(read.lookupID)
    }

    /// Waits for one of the `limit` turns; `service_busy` when the queue is full.
    private func takeTurn() async throws {
        enum Admission { case now, queued, refused }
        let admission: Admission = state.withLock { state in
            if state.running < limit {
                state.running += 1
                return .now
            }
            return state.waiting.count < maxWaiting ? .queued : .refused
        }
        switch admission {
        case .now:
            return
        case .refused:
            throw CountersignError(.serviceBusy, "too many API keys are being checked at once; retry shortly")
        case .queued:
            await withCheckedContinuation { continuation in
                let admitted = state.withLock { state -> Bool in
                    // A turn may have come free between the two locks.
                    if state.running < limit {
                        state.running += 1
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if admitted { continuation.resume() }
            }
        }
    }

    private func passTurn() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            // The turn passes straight to the next in line, so `running` stays as it is.
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
