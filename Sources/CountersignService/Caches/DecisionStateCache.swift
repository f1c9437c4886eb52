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

    /// A tenant's load under way, which every decision that misses joins: a large tenant's state
    /// takes long enough to load that callers each loading their own took turns on the pool and
    /// stalled every decision of the tenant (and its neighbours') at each expiry.
    private struct TenantLoad {
        var readAt: CachedStates<CachedTenant>.Token
        var task: Task<DecisionStateStore.TenantState?, any Error>
    }

    private struct Tenants {
        var cached = CachedStates<CachedTenant>()
        var loads: [UUID: TenantLoad] = [:]
        /// The last state read of each tenant, forgotten or not: the next load reads only what
        /// changed since (``DecisionStateStore/tenantState(_:after:)``). A forget says a state
        /// must not answer decisions; it is still a sound base, since what changed after it is
        /// found by version in the database.
        var bases: [UUID: Base] = [:]

        /// The base of the next load, unless its chain of loads is due a whole read.
        func base(for tenantID: UUID) -> Base? {
            guard let base = bases[tenantID], ContinuousClock.now - base.wholeReadAt < DecisionStateCache.chainAge else { return nil }
            return base
        }

        /// Keeps `state`, loaded from `base` (nil: read whole), for decisions unless it was
        /// forgotten since `readAt`, and as the next base whatever its version (after a database
        /// gone back in time, the whole read must replace a base from before) unless everything
        /// was forgotten since: it may be built on a base that went then.
        mutating func keep(_ state: DecisionStateStore.TenantState, for tenantID: UUID, readAt: CachedStates<CachedTenant>.Token, builtOn base: Base?) {
            cached.keep(CachedTenant(state: state, loadedAt: .now), for: tenantID, readAt: readAt)
            if readAt.epoch == cached.token(for: tenantID).epoch {
                bases[tenantID] = Base(state: state, wholeReadAt: base?.wholeReadAt ?? .now)
            }
        }
    }

    private struct Base {
        var state: DecisionStateStore.TenantState
        /// When the whole state was read that this one is built on, through loads of what changed.
        var wholeReadAt: ContinuousClock.Instant
    }

    let store: DecisionStateStore
    /// Reads a tenant's state, from a base when there is one.
    private let loadTenant: @Sendable (UUID, DecisionStateStore.TenantState?) async throws -> DecisionStateStore.TenantState?
    /// How long loads build on a whole read before the next is read whole: bounds any drift
    /// nothing announced (a database restored to an earlier point whose versions climbed back
    /// past the base's), at one whole read per tenant this often. Well inside the day
    /// `credential_removals` keeps (migration 0027).
    static let chainAge: Duration = .seconds(600)
    /// Decisions never use a stale entry (the writer checks); the other readers that act on the
    /// policy (session lifetimes, submissions, security checks) read ``settings(_:)``.
    private let tenantTTL: Duration
    private let tenants = Mutex(Tenants())
    private let sessions = Mutex<CachedStates<DecisionStateStore.SessionState>>(CachedStates())
    private static let sessionLimit = 50_000

    public convenience init(store: DecisionStateStore, tenantTTL: Duration = .seconds(5)) {
        self.init(store: store, tenantTTL: tenantTTL) { tenantID, base in
            if let base { try await store.tenantState(tenantID, after: base) } else { try await store.tenantState(tenantID) }
        }
    }

    /// `loadTenant` reads a tenant's state, from the base given if any (the store's, which tests
    /// count the calls of).
    init(
        store: DecisionStateStore,
        tenantTTL: Duration,
        loadTenant: @escaping @Sendable (UUID, DecisionStateStore.TenantState?) async throws -> DecisionStateStore.TenantState?
    ) {
        self.store = store
        self.tenantTTL = tenantTTL
        self.loadTenant = loadTenant
    }

    /// The tenant's state; `fresh` reads it from the database whatever is cached, for answers
    /// that must be as new as the request (explain) without dropping what decisions use.
    public func tenant(_ tenantID: UUID, fresh: Bool = false) async throws -> DecisionStateStore.TenantState {
        if fresh {
            let (readAt, base) = tenants.withLock { ($0.cached.token(for: tenantID), $0.base(for: tenantID)) }
            let state = try await load(tenantID, from: base?.state)
            tenants.withLock { $0.keep(state, for: tenantID, readAt: readAt, builtOn: base) }
            return state
        }
        let (cached, load) = tenants.withLock { tenants -> (DecisionStateStore.TenantState?, Task<DecisionStateStore.TenantState?, any Error>?) in
            let cached = tenants.cached.values[tenantID]
            if let cached, ContinuousClock.now - cached.loadedAt < tenantTTL { return (cached.state, nil) }
            let readAt = tenants.cached.token(for: tenantID)
            // A load begun before a forget may hold what the forget announced is gone: not joined.
            if let load = tenants.loads[tenantID], load.readAt == readAt { return (cached?.state, load.task) }
            let base = tenants.base(for: tenantID)
            // The load keeps what it read before anyone waiting for it goes on: a forget that
            // follows must find it as the next load's base, or that load reads the tenant whole.
            let task = Task {
                var state: DecisionStateStore.TenantState?
                defer {
                    self.tenants.withLock { tenants in
                        // Stamped when the load ends: one that took longer than the TTL is still kept.
                        if let state { tenants.keep(state, for: tenantID, readAt: readAt, builtOn: base) }
                        if tenants.loads[tenantID]?.readAt == readAt { tenants.loads[tenantID] = nil }
                    }
                }
                state = try await self.loadTenant(tenantID, base?.state)
                return state
            }
            tenants.loads[tenantID] = TenantLoad(readAt: readAt, task: task)
            return (cached?.state, task)
        }
        // An entry past its time answers while its reload runs: a decision made from a state that
        // changed meanwhile is refused by the writer and made again from fresh state, so the
        // time only bounds how long unannounced drift (the clock offset) lasts. Waiting for the
        // reload instead stalled a large tenant's decisions at every expiry.
        if let cached { return cached }
        guard let state = try await load?.value else { throw CountersignError(.notFound, "no such tenant") }
        return state
    }

    /// The tenant's flags and policy as they are now, without its credentials: for the routes
    /// that act on the policy alone, which must follow a change made through another instance
    /// at once and must not pay for a large tenant's credentials.
    public func settings(_ tenantID: UUID) async throws -> DecisionStateStore.TenantSettings {
        guard let settings = try await store.tenantSettings(tenantID) else {
            throw CountersignError(.notFound, "no such tenant")
        }
        return settings
    }

    private func load(_ tenantID: UUID, from base: DecisionStateStore.TenantState?) async throws -> DecisionStateStore.TenantState {
        guard let state = try await loadTenant(tenantID, base) else {
            throw CountersignError(.notFound, "no such tenant")
        }
        return state
    }

    /// The session if it belongs to the tenant; `not_found` otherwise. `fresh` as for `tenant`.
    public func session(_ sessionID: UUID, tenantID: UUID, fresh: Bool = false) async throws -> DecisionStateStore.SessionState {
        let (cached, readAt) = sessions.withLock { ($0.values[sessionID], $0.token(for: sessionID)) }
        if !fresh, let cached, cached.session.tenantID == tenantID { return cached }
        guard let state = try await store.sessionState(tenantID: tenantID, sessionID: sessionID) else {
            throw CountersignError(.notFound, "no such session")
        }
        sessions.withLock { sessions in
            if sessions.values.count >= Self.sessionLimit { sessions.values.removeAll(keepingCapacity: true) }
            sessions.keep(state, for: sessionID, readAt: readAt)
        }
        return state
    }

    public func forgetTenant(_ tenantID: UUID) {
        tenants.withLock { $0.cached.forget(tenantID) }
    }

    /// Forgets the tenant's state after the writer refused a decision made from it as stale. A
    /// load begun since the last forget is joined rather than turned away: the decisions of one
    /// batch come back stale together, and each forgetting and loading the tenant again made a
    /// hundred loads of a large tenant at once. A load that still misses the change only costs
    /// another round: the writer refuses what is decided from it.
    public func forgetStaleTenant(_ tenantID: UUID) {
        tenants.withLock { tenants in
            if let load = tenants.loads[tenantID], load.readAt == tenants.cached.token(for: tenantID) {
                tenants.cached.values[tenantID] = nil
            } else {
                tenants.cached.forget(tenantID)
            }
        }
    }

    /// Forgets every tenant's state, when changes made elsewhere may have gone unheard.
    public func forgetAllTenants() {
        // Bases too: what went unheard may be a failover to a database that lost commits.
        tenants.withLock { tenants in
            tenants.cached.forgetAll()
            tenants.bases.removeAll()
        }
    }

    public func forgetSession(_ sessionID: UUID) {
        sessions.withLock { $0.forget(sessionID) }
    }

    /// Forgets what an outcome changed: its session's memory, and the tenant's state when the
    /// outcome blocked a credential.
    func forget(changedBy outcome: DecisionStore.OutcomeResult, tenantID: UUID) {
        if outcome.tenantStateChanged { forgetTenant(tenantID) }
        if outcome.sessionStateChanged { forgetSession(outcome.decision.sessionId) }
    }
}

/// Cached states, and what was forgotten of each since. A state read before its forget may be
/// older than what the forget announced, so it is not kept: otherwise a slow read could put back
/// the state a decision was just found stale against, and every decision after it would be
/// made, found stale and made again until they ran out of attempts. Counted per entry: one
/// tenant's changes used to turn away every other tenant's reads under way.
struct CachedStates<Value> {
    /// When a state was read: the states kept since are compared against it.
    struct Token: Equatable, Sendable {
        var epoch: UInt64
        var generation: UInt64
    }

    var values: [UUID: Value] = [:]
    private var generations: [UUID: UInt64] = [:]
    /// Raised by ``forgetAll()`` and whenever `generations` is emptied, so that no token taken
    /// before then matches again.
    private var epoch: UInt64 = 0
    static var generationLimit: Int { 100_000 }

    func token(for id: UUID) -> Token {
        Token(epoch: epoch, generation: generations[id] ?? 0)
    }

    /// Keeps `value`, read at `token`, unless it was forgotten since.
    mutating func keep(_ value: Value, for id: UUID, readAt token: Token) {
        if token == self.token(for: id) { values[id] = value }
    }

    mutating func forget(_ id: UUID) {
        values.removeValue(forKey: id)
        if generations.count >= Self.generationLimit {
            generations.removeAll(keepingCapacity: true)
            epoch &+= 1
        }
        generations[id, default: 0] &+= 1
    }

    mutating func forgetAll() {
        values.removeAll()
        generations.removeAll()
        epoch &+= 1
    }
}
