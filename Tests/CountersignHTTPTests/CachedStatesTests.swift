@testable import CountersignService
import CountersignCore
import CountersignStorage
import Foundation
import Synchronization
import Testing

@Suite struct CachedStatesTests {
    @Test func aStateReadBeforeAForgetIsNotKept() {
        var states = CachedStates<String>()
        let session = UUID()
        let readBefore = states.token(for: session)
        // A decision was recorded meanwhile and the state it changed forgotten.
        states.forget(session)
        states.keep("read before the change", for: session, readAt: readBefore)
        #expect(states.values[session] == nil)
        states.keep("read after it", for: session, readAt: states.token(for: session))
        #expect(states.values[session] == "read after it")
    }

    /// One tenant's changes used to turn away every other tenant's reads under way, so that a
    /// large tenant's slow load was rarely kept while others changed things.
    @Test func anotherEntrysForgetKeepsAReadUnderWay() {
        var states = CachedStates<String>()
        let (slow, busy) = (UUID(), UUID())
        let readAt = states.token(for: slow)
        states.forget(busy)
        states.keep("slow tenant's state", for: slow, readAt: readAt)
        #expect(states.values[slow] == "slow tenant's state")
    }

    @Test func forgettingEverythingTurnsAwayEveryReadUnderWay() {
        var states = CachedStates<String>()
        let id = UUID()
        let readAt = states.token(for: id)
        states.forgetAll()
        states.keep("read before", for: id, readAt: readAt)
        #expect(states.values[id] == nil)
    }

    /// The forgets counted per entry are bounded; emptying them must not let a read from before
    /// a forget match again.
    @Test func emptiedGenerationsMatchNoEarlierRead() {
        var states = CachedStates<String>()
        let id = UUID()
        let readAt = states.token(for: id)
        states.forget(id)
        for _ in 0..<CachedStates<String>.generationLimit { states.forget(UUID()) }
        states.keep("read before its forget", for: id, readAt: readAt)
        #expect(states.values[id] == nil)
    }

    /// Counts the loads of a cache's tenant states.
    final class Loads: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        /// Counts one more; returns how many so far.
        func add() -> Int { count.withLock { $0 += 1; return $0 } }
    }

    /// A cache whose loads of a new tenant's state (the database's) are counted, and delayed by
    /// `delay(n)` for the n-th.
    static func withCountedCache(
        tenantTTL: Duration,
        delay: @escaping @Sendable (Int) -> Duration = { _ in .zero },
        _ body: @escaping @Sendable (DecisionStateCache, UUID, Loads) async throws -> Void
    ) async throws {
        try await TestService.withSideAccess { api, side in
            let tenantID = try #require(UUID(uuidString: try await api.tenant().id))
            let store = DecisionStateStore(pool: side)
            let loads = Loads()
            let cache = DecisionStateCache(store: store, tenantTTL: tenantTTL) { id, base in
                let wait = delay(loads.add())
                if wait > .zero { try await Task.sleep(for: wait) }
                return if let base { try await store.tenantState(id, after: base) } else { try await store.tenantState(id) }
            }
            try await body(cache, tenantID, loads)
        }
    }

    /// Loads build on the last state read, forgotten or not, until everything is forgotten (the
    /// listener lost its connection: a failover may have lost commits), when one is read whole.
    @Test func loadsBuildOnTheLastStateUntilEverythingIsForgotten() async throws {
        try await TestService.withSideAccess { api, side in
            let tenantID = try #require(UUID(uuidString: try await api.tenant().id))
            let store = DecisionStateStore(pool: side)
            let whole = Loads()
            let built = Loads()
            let cache = DecisionStateCache(store: store, tenantTTL: .seconds(60)) { id, base in
                guard let base else {
                    _ = whole.add()
                    return try await store.tenantState(id)
                }
                _ = built.add()
                return try await store.tenantState(id, after: base)
            }
            _ = try await cache.tenant(tenantID)
            cache.forgetTenant(tenantID)
            _ = try await cache.tenant(tenantID)
            cache.forgetStaleTenant(tenantID)
            _ = try await cache.tenant(tenantID, fresh: true)
            #expect((whole.value, built.value) == (1, 2))
            cache.forgetAllTenants()
            _ = try await cache.tenant(tenantID)
            #expect((whole.value, built.value) == (2, 2))
        }
    }

    /// Decisions that miss the cache at once share one load of the tenant's state: each loading
    /// its own stalled a large tenant's decisions at every expiry.
    @Test func decisionsMissingTogetherShareOneLoad() async throws {
        try await Self.withCountedCache(tenantTTL: .seconds(60)) { cache, tenantID, loads in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 { group.addTask { _ = try await cache.tenant(tenantID) } }
                try await group.waitForAll()
            }
            #expect(loads.value == 1)
            _ = try await cache.tenant(tenantID)
            #expect(loads.value == 1)
            // A forget is followed: the next decision loads again.
            cache.forgetTenant(tenantID)
            _ = try await cache.tenant(tenantID)
            #expect(loads.value == 2)
            await #expect(throws: CountersignError.self) { try await cache.tenant(UUID()) }
        }
    }

    /// Past its time, an entry still answers while one reload runs: waiting for the reload
    /// stalled every decision of a large tenant at each expiry.
    @Test func anExpiredStateAnswersWhileItsReloadRuns() async throws {
        try await Self.withCountedCache(tenantTTL: .milliseconds(50), delay: { $0 > 1 ? .seconds(5) : .zero }) { cache, tenantID, loads in
            _ = try await cache.tenant(tenantID)
            try await Task.sleep(for: .milliseconds(100))
            let clock = ContinuousClock()
            let start = clock.now
            for _ in 0..<5 { _ = try await cache.tenant(tenantID) }
            #expect(clock.now - start < .seconds(3))
            // One reload, under way in the background.
            while loads.value < 2, clock.now - start < .seconds(5) { try await Task.sleep(for: .milliseconds(10)) }
            #expect(loads.value == 2)
        }
    }

    /// The decisions of one batch come back stale together: they share the reload the first of
    /// them starts.
    @Test func decisionsFoundStaleTogetherShareOneReload() async throws {
        try await Self.withCountedCache(tenantTTL: .seconds(60), delay: { _ in .seconds(2) }) { cache, tenantID, loads in
            _ = try await cache.tenant(tenantID)
            // The reload outlasts the time all twenty take to start on a loaded machine.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        cache.forgetStaleTenant(tenantID)
                        _ = try await cache.tenant(tenantID)
                    }
                }
                try await group.waitForAll()
            }
            #expect(loads.value == 2)
        }
    }
}
