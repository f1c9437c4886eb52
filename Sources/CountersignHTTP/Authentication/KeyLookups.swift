import CountersignCore
import CountersignStorage
import Synchronization

/// The database reads behind API keys the cache does not hold, kept from crowding out decisions.
///
/// Requests presenting the same uncached key share one read (an instance that just started sees
/// a whole fleet's first requests at once), unless the key cache forgot something between them
/// (a revocation: the earlier read may have found the key unrevoked), and reads of distinct keys
/// run at most `limit` at a time with at most `maxWaiting` queued behind them: a client spraying
/// made-up keys costs at most `limit` of the pool's connections, and beyond the queue it is told
/// `service_busy`.
final class KeyLookups: Sendable {
    typealias Find = @Sendable (String) async throws -> APIKeyStore.Authenticated?

    /// One read: of a lookup id, by requests that came after the same number of forgets.
    private struct Read: Hashable {
        var lookupID: String
        var forgets: Int
    }

    private let find: Find
    private let turns: Turns
    private let inFlight = Mutex<[Read: Task<APIKeyStore.Authenticated?, any Error>]>([:])

    init(limit: Int, maxWaiting: Int, find: @escaping Find) {
        self.find = find
        turns = Turns(limit, maxWaiting: maxWaiting)
    }

    /// Reads waiting for a turn.
    var queued: Int { turns.waiting }

    /// The key stored under `lookupID` (or that there is none), read once for all who ask at once
    /// after the same number of the key cache's forgets (`forgets`).
    func key(lookupID: String, readAfter forgets: Int = 0) async throws -> APIKeyStore.Authenticated? {
        let read = Read(lookupID: lookupID, forgets: forgets)
        let task = inFlight.withLock { inFlight in
            if let running = inFlight[read] { return running }
            let task = Task { try await self.read(read) }
            inFlight[read] = task
            return task
        }
        return try await task.value
    }

    private func read(_ read: Read) async throws -> APIKeyStore.Authenticated? {
        defer { inFlight.withLock { _ = $0.removeValue(forKey: read) } }
        do {
            return try await turns.run { try await find(read.lookupID) }
        } catch is Turns.QueueFull {
            throw CountersignError(.serviceBusy, "too many API keys are being checked at once; retry shortly")
        }
    }
}
