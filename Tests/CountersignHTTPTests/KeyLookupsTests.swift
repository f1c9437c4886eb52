@testable import CountersignHTTP
import CountersignCore
import CountersignStorage
import CountersignTestSupport
import Synchronization
import Testing

@Suite("API key lookups")
struct KeyLookupsTests {
    /// A `find` that holds every read until the test lets it go, counting reads.
    final class HeldReads: Sendable {
        private struct State {
            var held: [CheckedContinuation<Void, Never>] = []
            var calls: [String] = []
            var running = 0
            var mostRunning = 0
        }
        private let state = Mutex(State())

        var calls: [String] { state.withLock { $0.calls } }
        var held: Int { state.withLock { $0.held.count } }
        var mostRunning: Int { state.withLock { $0.mostRunning } }

        func find(_ lookupID: String) async -> APIKeyStore.Authenticated? {
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    state.calls.append(lookupID)
                    state.running += 1
                    state.mostRunning = max(state.mostRunning, state.running)
                    state.held.append(continuation)
                }
            }
            state.withLock { $0.running -= 1 }
            return nil
        }

        func releaseAll() {
            for continuation in state.withLock({ state in defer { state.held = [] }; return state.held }) { continuation.resume() }
        }
    }

    @Test func requestsForTheSameKeyShareOneRead() async throws {
        let reads = HeldReads()
        let lookups = KeyLookups(limit: 2, maxWaiting: 4) { await reads.find($0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 { group.addTask { _ = try await lookups.key(lookupID: "samekey") } }
            #expect(await eventually { reads.held == 1 })
            try await whileReleasing(reads.releaseAll) { try await group.waitForAll() }
        }
        #expect(reads.calls == ["samekey"])
    }

    @Test func distinctKeysAreReadAFewAtATimeAndTheRestRefusedBeyondTheQueue() async throws {
        let reads = HeldReads()
        let lookups = KeyLookups(limit: 2, maxWaiting: 2) { await reads.find($0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in ["a", "b", "c", "d"] { group.addTask { _ = try await lookups.key(lookupID: id) } }
            #expect(await eventually { reads.held == 2 && lookups.queued == 2 })
            await #expect(throws: CountersignError.self) { try await lookups.key(lookupID: "e") }
            // A key already being read joins that read instead of queueing.
            group.addTask { _ = try await lookups.key(lookupID: "a") }
            try await whileReleasing(reads.releaseAll) { try await group.waitForAll() }
        }
        #expect(reads.mostRunning == 2)
        #expect(Set(reads.calls) == ["a", "b", "c", "d"])
        // With the queue empty again, a new key is read at once.
        let late = Task { _ = try await lookups.key(lookupID: "e") }
        #expect(await eventually { reads.held == 1 })
        try await whileReleasing(reads.releaseAll) { try await late.value }
    }
}
