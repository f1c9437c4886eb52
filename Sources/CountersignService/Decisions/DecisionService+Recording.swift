public import CountersignCore
public import CountersignStorage
public import Foundation

extension DecisionService {
    /// The state one decision is made from: the session and the tenant, loaded as
    /// ``decide(_:for:)`` loads them, so the writer can tell when they changed underneath.
    public struct DecisionState: Sendable {
        public var session: DecisionStateStore.SessionState
        public var tenant: DecisionStateStore.TenantState
        public var now: Date

        /// The decision engine's plan for `challenge` from this state. `releasesPassword`: whether
        /// a password released goes to the client (`DecisionInputs.releasesPassword`).
        public func plan(for challenge: Challenge, releasesPassword: Bool) -> DecisionPlan {
            DecisionEngine.decide(
                DecisionInputs(
                    challenge: challenge,
                    policy: tenant.policy.policy,
                    sessionID: session.session.id,
                    clientID: session.session.clientId,
                    sessionMemory: session.memory,
                    credentials: DecisionCredentials(session: session.credentials, tenant: tenant.credentials),
                    blockedUntil: tenant.blockedUntil,
                    now: now,
                    releasesPassword: releasesPassword
                )
            )
        }
    }

    /// A decision after it was recorded.
    public struct RecordedDecision: Sendable {
        public var id: UUID
        /// The credential released with `useCredential`: its secret goes no further than the
        /// caller, which decides what of it the client sees.
        public var released: ReleasedCredential?
        /// The client identity released with `useCredential`, as a fresh PKCS#12.
        public var identity: ReleasedIdentity?
        public var remainingAttempts: Int?
    }

    /// The pipeline of ``decide(_:for:)`` for callers that plan the decision themselves (raw
    /// responses choose among several challenges): load the state, `plan`, open the released
    /// credential's secret, let `prepare` check what will be answered with it, record the
    /// decision durably, and only then return. When the state changed under the decision it is
    /// planned again from fresh state, as ``decide(_:for:)`` does.
    ///
    /// - Parameters:
    ///   - plan: decides from the state; may run several times, so it must not have effects.
    ///   - prepare: runs before the decision is recorded, with the released credential; an
    ///     error it throws (an answer that cannot be built) is thrown with nothing recorded.
    /// - Throws: `session_invalidated`, `not_found`, `service_busy`, and whatever `plan` or
    ///   `prepare` throw.
    public func decideAndRecord<Planned: PlannedDecision, Prepared: Sendable>(
        taskID: String,
        kind: String,
        previousFailureCount: Int,
        for asker: Asker,
        plan: (DecisionState) throws -> Planned,
        prepare: (Planned, ReleasedCredential?) throws -> Prepared
    ) async throws -> (decision: RecordedDecision, planned: Planned, prepared: Prepared) {
        for _ in 0..<Self.attempts {
            let state = try await state(for: asker)
            let (session, tenant) = (state.session, state.tenant)
            guard session.session.isActive(at: state.now) else {
                throw CountersignError(.sessionInvalidated, "the session is invalidated; open a new one")
            }
            let planned = try plan(state)
            let decisionPlan = planned.plan
            let memoryKey = decisionPlan.memoryKey ?? planned.space.key
            if decisionPlan.passedOverMemory, let stale = session.memory[memoryKey]?.credentialID {
                // What the session remembered no longer holds: forgotten, the answer decided now
                // is remembered in its place (the recorder keeps a remembered answer over a new one).
                try await decisions.forgetRemembered(sessionID: asker.sessionID, memoryKey: memoryKey, credentialID: stale)
                forgetState(asker)
                continue
            }
            var released: ReleasedCredential?
            var identity: ReleasedIdentity?
            if decisionPlan.disposition == .useCredential, let credential = decisionPlan.credential {
                switch credential.kind {
                case .password:
                    guard let password = try await secrets.password(of: credential) else {
                        forgetState(asker)
                        continue
                    }
                    released = ReleasedCredential(kind: credential.kind, user: credential.attributes.account, password: password, domain: credential.domain)
                case .clientIdentity:
                    guard let opened = try await identities.identity(of: credential) else {
                        forgetState(asker)
                        continue
                    }
                    identity = try Self.release(opened, as: credential)
                }
            }
            let prepared = try prepare(planned, released)
            let record = DecisionRecord(
                tenantID: asker.tenantID,
                sessionID: asker.sessionID,
                clientID: session.session.clientId,
                keyID: asker.keyID,
                taskID: taskID,
                kind: kind,
                space: planned.space,
                previousFailureCount: previousFailureCount,
                plan: decisionPlan,
                releasedUser: released?.user,
                tenantStateVersion: tenant.version,
                sessionStateVersion: session.version
            )
            switch try await writer.record(record) {
            case .stale:
                cache.forgetStaleTenant(asker.tenantID)
                cache.forgetSession(asker.sessionID)
                continue
            case .sessionEnded:
                // The database's clock, not this instance's, says when a session has expired: a
                // session live here may have ended there, and deciding again would not change that.
                cache.forgetSession(asker.sessionID)
                throw CountersignError(.sessionInvalidated, "the session is invalidated; open a new one")
            case .recorded(let failures):
                if decisionPlan.rememberInSession { cache.forgetSession(asker.sessionID) }
                DecisionMetrics.shared.decided(decisionPlan)
                let decision = RecordedDecision(
                    id: record.id,
                    released: released,
                    identity: identity,
                    remainingAttempts: Self.remainingAttempts(decisionPlan, failures: failures)
                )
                return (decision, planned, prepared)
            }
        }
        throw CountersignError(.serviceBusy, "the tenant's policy or credentials kept changing during the decision; retry")
    }

    /// Records the outcome of an earlier decision that a later response showed (`source`
    /// `response`), keeping the caches honest as ``reportOutcome(_:upstreamStatus:decisionID:tenantID:keyID:)``
    /// does. `nil` when the decision already has another outcome (nothing more to record).
    public func recordOutcome(
        _ outcome: Outcome,
        upstreamStatus: Int?,
        of decisionID: UUID,
        tenantID: UUID,
        source: String
    ) async throws -> DecisionStore.OutcomeResult? {
        do {
            guard let result = try await decisions.reportOutcome(
                tenantID: tenantID,
                decisionID: decisionID,
                outcome: outcome,
                upstreamStatus: upstreamStatus,
                source: source
            ) else { return nil }
            cache.forget(changedBy: result, tenantID: tenantID)
            return result
        } catch let error as CountersignError where error.code == .outcomeConflict {
            return nil
        }
    }

    /// The state a decision for `asker` is made from now (``decideAndRecord(taskID:kind:previousFailureCount:for:plan:prepare:)``),
    /// whether the session is live or not.
    func state(for asker: Asker) async throws -> DecisionState {
        let session = try await cache.session(asker.sessionID, tenantID: asker.tenantID)
        let tenant = try await cache.tenant(answering: asker)
        // The database's clock set the blocks and the session's expiry, and the writer judges by
        // it: so does the decision. By this instance's own clock, running ahead, a credential still
        // blocked would be released; running behind, an ended session would be decided in (the
        // writer refuses that: `.sessionEnded`).
        return DecisionState(session: session, tenant: tenant, now: tenant.databaseNow)
    }

    /// The session, ended or not, if it belongs to the tenant (`not_found` otherwise).
    @discardableResult
    public func session(of asker: Asker) async throws -> Session {
        try await cache.session(asker.sessionID, tenantID: asker.tenantID).session
    }

    /// Refuses, from the database's state, an asker whose key was revoked or whose tenant was
    /// disabled, through any instance: before a request counts the rejection its retry implies,
    /// which no later refusal of the request would take back.
    public func checkAnswering(_ asker: Asker) async throws {
        _ = try await cache.settings(answering: asker)
    }

    private func forgetState(_ asker: Asker) {
        cache.forgetTenant(asker.tenantID)
        cache.forgetSession(asker.sessionID)
    }
}

extension DecisionStateCache {
    /// The asker's tenant state, unless it says the tenant is disabled or the asker's key revoked.
    /// Another instance may take such a key until it hears of the change; the state the writer
    /// checks against says so (`TenantStore.setDisabled`, `APIKeyStore.revoke`). A disabled tenant
    /// is read again before it is refused, as one enabled through another instance is enabled now;
    /// a revoked key stays revoked.
    func tenant(answering asker: DecisionService.Asker, fresh: Bool = false) async throws -> DecisionStateStore.TenantState {
        var tenant = try await tenant(asker.tenantID, fresh: fresh)
        if tenant.disabled, !fresh { tenant = try await self.tenant(asker.tenantID, fresh: true) }
        guard !tenant.disabled else { throw CountersignError.tenantIsDisabled }
        guard !tenant.revokedKeys.contains(asker.keyID) else { throw CountersignError.apiKeyNotValid }
        return tenant
    }

    /// The asker's tenant settings as they are now, refused as ``tenant(answering:fresh:)``
    /// refuses: for the routes that act on the policy alone.
    func settings(answering asker: DecisionService.Asker) async throws -> DecisionStateStore.TenantSettings {
        try await settings(asker.tenantID, answering: asker.keyID)
    }

    /// The tenant's settings as they are now, unless they say the tenant is disabled or the key
    /// `keyID` revoked: for every route that writes what a key asks (an outcome, a submission, a
    /// session), which an instance that has not heard of the change yet would otherwise take.
    func settings(_ tenantID: UUID, answering keyID: UUID) async throws -> DecisionStateStore.TenantSettings {
        let settings = try await settings(tenantID)
        guard !settings.disabled else { throw CountersignError.tenantIsDisabled }
        guard !settings.revokedKeys.contains(keyID) else { throw CountersignError.apiKeyNotValid }
        return settings
    }
}
