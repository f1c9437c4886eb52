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

    /// Decisions that miss the cache at once share one load of the tenant's state: each loading
    /// its own stalled a large tenant's decisions at every expiry.
    @Test func decisionsMissingTogetherShareOneLoad() async throws {
        try await TestService.withSideAccess { api, side in
            let tenant = try await api.tenant()
            let tenantID = try #require(UUID(uuidString: tenant.id))
            let store = DecisionStateStore(pool: side)
            let loads = Mutex(0)
            let cache = DecisionStateCache(store: store, tenantTTL: .seconds(60)) { id in
                loads.withLock { $0 += 1 }
                return try await store.tenantState(id)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 { group.addTask { _ = try await cache.tenant(tenantID) } }
                try await group.waitForAll()
            }
            #expect(loads.withLock { $0 } == 1)
            _ = try await cache.tenant(tenantID)
            #expect(loads.withLock { $0 } == 1)
            // A forget is followed: the next decision loads again.
            cache.forgetTenant(tenantID)
            _ = try await cache.tenant(tenantID)
            #expect(loads.withLock { $0 } == 2)
            await #expect(throws: CountersignError.self) { try await cache.tenant(UUID()) }
        }
    }
}
