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

    let store: DecisionStateStore
    /// Decisions never use a stale entry (the writer checks); the other readers that act on the
    /// policy (session lifetimes, submissions, security checks) read it `fresh`.
    private let tenantTTL: Duration
    private let tenants = Mutex<CachedStates<CachedTenant>>(CachedStates())
    private let sessions = Mutex<CachedStates<DecisionStateStore.SessionState>>(CachedStates())
    private static let sessionLimit = 50_000

    public init(store: DecisionStateStore, tenantTTL: Duration = .seconds(5)) {
        self.store = store
        self.tenantTTL = tenantTTL
    }

    /// The tenant's state; `fresh` reads it from the database whatever is cached, for answers
    /// that must be as new as the request (explain) without dropping what decisions use.
    public func tenant(_ tenantID: UUID, fresh: Bool = false) async throws -> DecisionStateStore.TenantState {
        let now = ContinuousClock.now
        let (cached, forgets) = tenants.withLock { ($0.values[tenantID], $0.forgets) }
        if !fresh, let cached, now - cached.loadedAt < tenantTTL { return cached.state }
        guard let state = try await store.tenantState(tenantID) else {
            throw CountersignError(.notFound, "no such tenant")
        }
        tenants.withLock { $0.keep(CachedTenant(state: state, loadedAt: now), for: tenantID, readAfter: forgets) }
        return state
    }

    /// The session if it belongs to the tenant; `not_found` otherwise. `fresh` as for `tenant`.
    public func session(_ sessionID: UUID, tenantID: UUID, fresh: Bool = false) async throws -> DecisionStateStore.SessionState {
        let (cached, forgets) = sessions.withLock { ($0.values[sessionID], $0.forgets) }
        if !fresh, let cached, cached.session.tenantID == tenantID { return cached }
        guard let state = try await store.sessionState(tenantID: tenantID, sessionID: sessionID) else {
            throw CountersignError(.notFound, "no such session")
        }
        sessions.withLock { sessions in
            if sessions.values.count >= Self.sessionLimit { sessions.values.removeAll(keepingCapacity: true) }
            sessions.keep(state, for: sessionID, readAfter: forgets)
        }
        return state
    }

    public func forgetTenant(_ tenantID: UUID) {
        tenants.withLock { $0.forget(tenantID) }
    }

    /// Forgets every tenant's state, when changes made elsewhere may have gone unheard.
    public func forgetAllTenants() {
        tenants.withLock { $0.forgetAll() }
    }

    public func forgetSession(_ sessionID: UUID) {
        sessions.withLock { $0.forget(sessionID) }
    }
}

/// Cached states, and how many were forgotten so far. A state read before a forget may be older
/// than what the forget announced, so it is not kept: otherwise a slow read could put back the
/// state a decision was just found stale against, and every decision after it would be made,
/// found stale and made again until they ran out of attempts.
struct CachedStates<Value> {
    var values: [UUID: Value] = [:]
    private(set) var forgets = 0

    /// Keeps `value`, read when `forgets` was `forgetsBefore`, unless something was forgotten since.
    mutating func keep(_ value: Value, for id: UUID, readAfter forgetsBefore: Int) {
        if forgets == forgetsBefore { values[id] = value }
    }

    mutating func forget(_ id: UUID) {
        values.removeValue(forKey: id)
        forgets &+= 1
    }

    mutating func forgetAll() {
        values.removeAll()
        forgets &+= 1
    }
}
