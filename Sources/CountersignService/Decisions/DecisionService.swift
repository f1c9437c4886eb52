public import CountersignCore
public import CountersignStorage
public import Foundation
public import Logging
import Metrics

/// Answers challenges: loads the decision state (from memory when it can), lets the
/// `DecisionEngine` decide, records the decision durably, and only then hands out a secret.
public struct DecisionService: Sendable {
    let cache: DecisionStateCache
    let secrets: SecretCache
    let writer: DecisionWriter
    let decisions: DecisionStore
    let logger: Logger

    public init(cache: DecisionStateCache, secrets: SecretCache, writer: DecisionWriter, decisions: DecisionStore, logger: Logger) {
        self.cache = cache
        self.secrets = secrets
        self.writer = writer
        self.decisions = decisions
        self.logger = logger
    }

    /// How many times a decision is made again after its state changed under it before the
    /// client is told to retry.
    static let attempts = 8

    /// Who is asking: the session and the key it came with.
    public struct Asker: Sendable {
        public var tenantID: UUID
        public var sessionID: UUID
        public var keyID: UUID

        public init(tenantID: UUID, sessionID: UUID, keyID: UUID) {
            self.tenantID = tenantID
            self.sessionID = sessionID
            self.keyID = keyID
        }
    }

    public func decide(_ challenge: Challenge, for asker: Asker) async throws -> DecisionAnswer {
        try challenge.validate()
        let space = challenge.protectionSpace.normalized
        var countedRejection: UUID?
        var retryExamined = false
        for _ in 0..<Self.attempts {
            let session = try await cache.session(asker.sessionID, tenantID: asker.tenantID)
            let now = Date()
            guard session.session.isActive(at: now) else {
                throw CountersignError(.sessionInvalidated, "the session is invalidated; open a new one")
            }
            if !retryExamined {
                retryExamined = true
                if let rejected = try await countRetry(challenge, space: space, session: session.session) {
                    countedRejection = rejected
                    continue
                }
            }
            let tenant = try await cache.tenant(asker.tenantID)
            let plan = DecisionEngine.decide(
                DecisionInputs(
                    challenge: challenge,
                    policy: tenant.policy.policy,
                    sessionID: asker.sessionID,
                    clientID: session.session.clientId,
                    sessionMemory: session.memory,
                    credentials: session.credentials + tenant.credentials,
                    blockedUntil: tenant.blockedUntil,
                    now: now
                )
            )
            var released: ReleasedCredential?
            if plan.disposition == .useCredential, let credential = plan.credential {
                guard let password = try await secrets.password(of: credential) else {
                    forget(asker)
                    continue
                }
                released = ReleasedCredential(kind: credential.kind, user: credential.attributes.account, password: password, domain: credential.domain)
            }
            let record = DecisionRecord(
                tenantID: asker.tenantID,
                sessionID: asker.sessionID,
                clientID: session.session.clientId,
                keyID: asker.keyID,
                taskID: challenge.taskId,
                space: space,
                previousFailureCount: challenge.failureCount,
                plan: plan,
                releasedUser: released?.user,
                tenantStateVersion: tenant.version,
                sessionStateVersion: session.version
            )
            switch try await writer.record(record) {
            case .stale:
                forget(asker)
                continue
            case .recorded(let failures):
                if plan.rememberInSession { cache.forgetSession(asker.sessionID) }
                DecisionMetrics.shared.decided(plan)
                return DecisionAnswer(
                    decisionId: record.id,
                    disposition: plan.disposition,
                    credential: released,
                    persistence: plan.persistence,
                    scope: plan.scope,
                    remainingAttempts: Self.remainingAttempts(plan, failures: failures),
                    blockedUntil: plan.blockedUntil,
                    rule: plan.rule,
                    source: plan.source,
                    reason: plan.reason,
                    countedRejection: countedRejection
                )
            }
        }
        throw CountersignError(.serviceBusy, "the tenant's policy or credentials kept changing during the decision; retry")
    }

    /// What the policy would answer, from fresh state, without recording anything or
    /// releasing a secret.
    public func explain(_ challenge: Challenge, tenantID: UUID, clientID: String, sessionID: UUID?) async throws -> (plan: DecisionPlan, remainingAttempts: Int?) {
        try challenge.validate()
        cache.forgetTenant(tenantID)
        let tenant = try await cache.tenant(tenantID)
        var session: DecisionStateStore.SessionState?
        if let sessionID {
            cache.forgetSession(sessionID)
            session = try await cache.session(sessionID, tenantID: tenantID)
        }
        let plan = DecisionEngine.decide(
            DecisionInputs(
                challenge: challenge,
                policy: tenant.policy.policy,
                sessionID: sessionID ?? UUID(),
                clientID: session?.session.clientId ?? clientID,
                sessionMemory: session?.memory ?? [:],
                credentials: (session?.credentials ?? []) + tenant.credentials,
                blockedUntil: tenant.blockedUntil,
                now: Date()
            )
        )
        return (plan, plan.blockedUntil != nil ? 0 : nil)
    }

    /// Records an outcome the client reports and keeps the caches honest.
    public func reportOutcome(_ outcome: Outcome, upstreamStatus: Int?, decisionID: UUID, tenantID: UUID) async throws -> DecisionStore.OutcomeResult {
        guard let result = try await decisions.reportOutcome(tenantID: tenantID, decisionID: decisionID, outcome: outcome, upstreamStatus: upstreamStatus, source: "report") else {
            throw CountersignError(.notFound, "no such decision")
        }
        if result.stateChanged {
            cache.forgetTenant(tenantID)
            cache.forgetSession(result.decision.sessionId)
        }
        return result
    }

    /// A challenge that comes back for the same task and space with `previousFailureCount > 0`
    /// and names the user last released there is how URLSession says the credential was
    /// refused: count that rejection, once. Returns the rejected decision when this counted it.
    private func countRetry(_ challenge: Challenge, space: ProtectionSpace, session: Session) async throws -> UUID? {
        guard challenge.failureCount > 0, let user = challenge.proposedCredential?.user, !user.isEmpty else { return nil }
        guard let earlier = try await decisions.lastRelease(sessionID: session.id, taskID: challenge.taskId, spaceKey: space.key, user: user),
            earlier.outcome == nil
        else { return nil }
        do {
            guard let result = try await decisions.reportOutcome(
                tenantID: session.tenantID,
                decisionID: earlier.id,
                outcome: .rejected,
                upstreamStatus: challenge.failureResponse?.status,
                source: "retry"
            ) else { return nil }
            if result.stateChanged {
                cache.forgetTenant(session.tenantID)
                cache.forgetSession(session.id)
            }
            return result.counted ? earlier.id : nil
        } catch let error as CountersignError where error.code == .outcomeConflict {
            // The client reported another outcome for it meanwhile; nothing to count.
            return nil
        }
    }

    private func forget(_ asker: Asker) {
        cache.forgetTenant(asker.tenantID)
        cache.forgetSession(asker.sessionID)
    }

    static func remainingAttempts(_ plan: DecisionPlan, failures: Int) -> Int? {
        if plan.blockedUntil != nil { return 0 }
        guard plan.credential != nil, let maxFailures = plan.maxFailures else { return nil }
        return max(0, maxFailures - failures)
    }
}
