import CountersignCore
public import CountersignStorage
public import Foundation
import Synchronization

/// What decisions are made from, kept in memory: each tenant's policy, credentials and
/// blocks, and each session's memory. Entries are trusted only as far as the writer lets
/// them: a decision made from a stale entry fails to commit, the entry is dropped here, and
/// the decision is made again from fresh state (see `DecisionWriter`).
public final class DecisionStateCache: Sendable {
    private struct CachedTenant {
        var state: DecisionStateStore.TenantState
        var loadedAt: ContinuousClock.Instant
    }

    private let store: DecisionStateStore
    /// Decisions never use a stale entry (the writer checks), but the other readers (session
    /// lifetimes, which persistences clients may submit) see changes made through other
    /// instances after at most this long.
    private let tenantTTL: Duration
    private let tenants = Mutex<[UUID: CachedTenant]>([:])
    private let sessions = Mutex<[UUID: DecisionStateStore.SessionState]>([:])
    private static let sessionLimit = 50_000

    public init(store: DecisionStateStore, tenantTTL: Duration = .seconds(5)) {
        self.store = store
        self.tenantTTL = tenantTTL
    }

    public func tenant(_ tenantID: UUID) async throws -> DecisionStateStore.TenantState {
        let now = ContinuousClock.now
        if let cached = tenants.withLock({ $0[tenantID] }), now - cached.loadedAt < tenantTTL { return cached.state }
        guard let state = try await store.tenantState(tenantID) else {
            throw CountersignError(.notFound, "no such tenant")
        }
        tenants.withLock { $0[tenantID] = CachedTenant(state: state, loadedAt: now) }
        return state
    }

    /// The session if it belongs to the tenant; `not_found` otherwise.
    public func session(_ sessionID: UUID, tenantID: UUID) async throws -> DecisionStateStore.SessionState {
        if let cached = sessions.withLock({ $0[sessionID] }), cached.session.tenantID == tenantID { return cached }
        guard let state = try await store.sessionState(tenantID: tenantID, sessionID: sessionID) else {
            throw CountersignError(.notFound, "no such session")
        }
        sessions.withLock { sessions in
            if sessions.count >= Self.sessionLimit { sessions.removeAll(keepingCapacity: true) }
            sessions[sessionID] = state
        }
        return state
    }

    public func forgetTenant(_ tenantID: UUID) {
        _ = tenants.withLock { $0.removeValue(forKey: tenantID) }
    }

    public func forgetSession(_ sessionID: UUID) {
        _ = sessions.withLock { $0.removeValue(forKey: sessionID) }
    }
}
