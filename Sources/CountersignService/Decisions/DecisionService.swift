public import CountersignCore
import CountersignCrypto
public import CountersignStorage
public import Foundation
public import Logging
import Metrics

/// Answers challenges: loads the decision state (from memory when it can), lets the
/// `DecisionEngine` decide, runs the TLS evaluations the plan leaves pending (server trust,
/// identity selection: OpenSSL, via the crypto module), records the decision durably, and only
/// then hands out a secret.
public struct DecisionService: Sendable {
    let cache: DecisionStateCache
    let secrets: SecretCache
    let identities: IdentityCache
    let trustEvaluator: ServerTrustEvaluator
    let writer: DecisionWriter
    let decisions: DecisionStore
    let logger: Logger

    /// `identities` defaults to a cache over the identities stored beside `secrets`' credentials.
    public init(
        cache: DecisionStateCache,
        secrets: SecretCache,
        writer: DecisionWriter,
        decisions: DecisionStore,
        logger: Logger,
        identities: IdentityCache? = nil,
        trustEvaluator: ServerTrustEvaluator = ServerTrustEvaluator()
    ) {
        self.cache = cache
        self.secrets = secrets
        self.identities = identities ?? IdentityCache(store: IdentityStore(credentials: secrets.store))
        self.trustEvaluator = trustEvaluator
        self.writer = writer
        self.decisions = decisions
        self.logger = logger
        // The decision counters exist from start, at 0.
        _ = DecisionMetrics.shared
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
        let tls = try PresentedTLS.parse(challenge)
        let session = try await cache.session(asker.sessionID, tenantID: asker.tenantID)
        // The retry reports the outcome of a decision already made, which a session ended with
        // `finishTasks` (or by expiry) still takes, as it takes an explicit report; a `cancel`
        // left no decision without an outcome, so nothing counts then.
        let countedRejection = try await countRetry(challenge, space: space, session: session.session, asker: asker)
        // Whether the session is live is judged in `decideAndRecord`, by the database's clock:
        // by this instance's, running ahead, a session the database still records in was refused.
        // Trust evaluations are kept across the attempts of one decision: a chain judged once
        // is not judged again because the policy state moved.
        var verdicts = TrustVerdicts()
        let (decision, planned, _) = try await decideAndRecord(
            taskID: challenge.taskId,
            kind: "challenge",
            previousFailureCount: challenge.failureCount,
            for: asker,
            plan: { state in
                let inputs = DecisionInputs(
                    challenge: challenge,
                    policy: state.tenant.policy.policy,
                    sessionID: asker.sessionID,
                    clientID: state.session.session.clientId,
                    sessionMemory: state.session.memory,
                    credentials: DecisionCredentials(session: state.session.credentials, tenant: state.tenant.credentials),
                    blockedUntil: state.tenant.blockedUntil,
                    now: state.now,
                    presentedChainDigest: tls.chainDigest,
                    acceptableIssuersDigest: tls.acceptableIssuersDigest
                )
                return ChallengePlan(space: space, plan: try resolve(DecisionEngine.decide(inputs), tls: tls, space: space, inputs: inputs, verdicts: &verdicts))
            },
            prepare: { _, _ in }
        )
        let plan = planned.plan
        return DecisionAnswer(
            decisionId: decision.id,
            disposition: plan.disposition,
            credential: decision.released,
            persistence: plan.persistence,
            scope: plan.scope,
            remainingAttempts: decision.remainingAttempts,
            blockedUntil: plan.blockedUntil,
            rule: plan.rule,
            source: plan.source,
            reason: plan.reason,
            countedRejection: countedRejection,
            identity: decision.identity,
            trust: plan.trust
        )
    }

    /// What the policy would answer, from fresh state, without recording anything or
    /// releasing a secret. `endedSession` is the named session when it has ended: a challenge
    /// in it is refused (`session_invalidated`), and the plan is what a new session would get.
    public func explain(
        _ challenge: Challenge,
        tenantID: UUID,
        clientID: String,
        sessionID: UUID?
    ) async throws -> (plan: DecisionPlan, endedSession: Session?, countedRejection: UUID?) {
        let tls: PresentedTLS
        do {
            try challenge.validate()
            tls = try PresentedTLS.parse(challenge)
        } catch let error as CountersignError {
            // The explain body holds the challenge as its member `challenge`.
            throw error.within("challenge")
        }
        let space = challenge.protectionSpace.normalized
        var tenant: DecisionStateStore.TenantState
        var session: DecisionStateStore.SessionState?
        var countedRejection: UUID?
        if let sessionID, let retry = Self.retry(challenge, space: space) {
            // A retry counts a rejection before it is answered, which may block the credential
            // or drop what the session remembers: explained from the state it would leave,
            // read in a transaction rolled back, and never cached.
            guard let after = try await cache.store.statesAfterRetry(tenantID: tenantID, sessionID: sessionID, of: retry) else {
                throw CountersignError(.notFound, "no such session")
            }
            (tenant, session, countedRejection) = (after.tenant, after.session, after.rejected)
        } else {
            // Fresh state, read without forgetting the cached one: a forget makes the tenant's
            // loads under way unfit to keep (`CachedStates`), so explain traffic would keep its
            // decisions' cache from filling.
            tenant = try await cache.tenant(tenantID, fresh: true)
            if let sessionID { session = try await cache.session(sessionID, tenantID: tenantID, fresh: true) }
        }
        var endedSession: Session?
        if var state = session {
            if !state.session.isActive(at: tenant.databaseNow) {
                // An ended session remembers nothing and holds no credentials, even before the
                // sweep has dropped what it had.
                state.memory = [:]
                state.credentials = []
                endedSession = state.session.observed(at: tenant.databaseNow)
            }
            session = state
        }
        let inputs = DecisionInputs(
            challenge: challenge,
            policy: tenant.policy.policy,
            sessionID: sessionID ?? UUID.random(),
            clientID: session?.session.clientId ?? clientID,
            sessionMemory: session?.memory ?? [:],
            credentials: DecisionCredentials(session: session?.credentials ?? [], tenant: tenant.credentials),
            blockedUntil: tenant.blockedUntil,
            // As a decision judges (`decideAndRecord`): by the database's clock.
            now: tenant.databaseNow,
            presentedChainDigest: tls.chainDigest,
            acceptableIssuersDigest: tls.acceptableIssuersDigest
        )
        var verdicts = TrustVerdicts()
        let plan = try resolve(DecisionEngine.decide(inputs), tls: tls, space: space, inputs: inputs, verdicts: &verdicts)
        return (plan, endedSession, countedRejection)
    }

    /// Records an outcome the client reports with key `keyID` and keeps the caches honest.
    public func reportOutcome(_ outcome: Outcome, upstreamStatus: Int?, decisionID: UUID, tenantID: UUID, keyID: UUID) async throws -> DecisionStore.OutcomeResult {
        guard let result = try await decisions.reportOutcome(
            tenantID: tenantID, decisionID: decisionID, outcome: outcome, upstreamStatus: upstreamStatus, source: "report", reportedBy: keyID
        ) else {
            throw CountersignError(.notFound, "no such decision")
        }
        cache.forget(changedBy: result, tenantID: tenantID)
        return result
    }

    /// A challenge that comes back for the same task and space with `previousFailureCount > 0`
    /// and names the user last released there is how URLSession says the credential was
    /// refused: count that rejection, once. Returns the rejected decision when this counted it.
    /// NTLM and Negotiate are answered once per session and handshaken on every new connection,
    /// so their failure comes back on whichever task opened the connection: it rejects a release
    /// of the space to any task of the session that has no outcome yet, the task's own first.
    /// A client certificate's retry names no user (an identity credential has none): it rejects
    /// the identity last released there.
    private func countRetry(_ challenge: Challenge, space: ProtectionSpace, session: Session, asker: Asker) async throws -> UUID? {
        guard let retry = Self.retry(challenge, space: space) else { return nil }
        try await checkAnswering(asker)
        let earlier = try await decisions.lastRelease(sessionID: session.id, retry: retry)
        guard let earlier, earlier.outcome == nil else { return nil }
        do {
            guard let result = try await decisions.reportOutcome(
                tenantID: session.tenantID,
                decisionID: earlier.id,
                outcome: .rejected,
                upstreamStatus: retry.upstreamStatus,
                source: "retry"
            ) else { return nil }
            cache.forget(changedBy: result, tenantID: session.tenantID)
            return result.counted ? earlier.id : nil
        } catch let error as CountersignError where error.code == .outcomeConflict {
            // The client reported another outcome for it meanwhile; nothing to count.
            return nil
        }
    }

    /// The retry `challenge` is, if it is one that may count a rejection (`countRetry`).
    static func retry(_ challenge: Challenge, space: ProtectionSpace) -> DecisionStore.Retry? {
        guard challenge.failureCount > 0 else { return nil }
        let named: DecisionStore.RetryUser
        if space.method == .clientCertificate {
            named = .anyone
        } else {
            guard let user = challenge.proposedCredential?.user, !user.isEmpty else { return nil }
            named = space.method.namesWindowsAccounts ? .windowsAccount(user) : .exact(user)
        }
        return DecisionStore.Retry(
            taskID: challenge.taskId,
            failureCount: challenge.failureCount,
            ofAnyTask: space.method.isSessionWide,
            spaceKey: space.key,
            user: named,
            upstreamStatus: challenge.failureResponse?.status
        )
    }

    /// Verdicts already reached for the presented chain in this request, by trust settings:
    /// a decision made again after a stale commit does not evaluate the chain again.
    typealias TrustVerdicts = [TrustSettings: ServerTrustVerdict]

    /// Runs the evaluation a plan leaves pending and returns the final plan.
    func resolve(_ plan: DecisionPlan, tls: PresentedTLS, space: ProtectionSpace, inputs: DecisionInputs, verdicts: inout TrustVerdicts) throws -> DecisionPlan {
        switch plan.pending {
        case nil:
            return plan
        case .serverTrust(let settings, _):
            guard let chain = tls.chain, let digest = tls.chainDigest else {
                throw CountersignError(
                    .serverTrustMissing,
                    "the policy evaluates this server's certificates: send them in 'protectionSpace.serverTrust.certificates' (DER, base64, leaf first)"
                )
            }
            let verdict = verdicts[settings] ?? trustEvaluator.evaluate(chain: chain, digest: digest, host: space.host, settings: settings, at: inputs.now)
            verdicts[settings] = verdict
            return DecisionEngine.resolve(plan, trust: verdict)
        case .identitySelection(let candidates, let explicit, _):
            let fitting = explicit ? candidates : candidates.filter { candidate in
                let names = (candidate.certificate?.issuerNames ?? []).compactMap { Data(base64Encoded: $0).map { [UInt8]($0) } }
                return AcceptableIssuers.match(names, acceptable: tls.acceptableIssuers)
            }
            return DecisionEngine.resolve(plan, identities: fitting, inputs: inputs)
        }
    }

    /// A PKCS#12 of `identity` under a passphrase made for this answer alone.
    static func release(_ identity: ClientIdentity, as credential: Credential) throws -> ReleasedIdentity {
        do {
            let passphrase = try SecureRandom.passphrase()
            let pkcs12 = try identity.exportPKCS12(passphrase: passphrase, friendlyName: credential.label ?? identity.certificate.subject)
            return ReleasedIdentity(
                identityId: credential.id,
                subject: identity.certificate.subject,
                issuer: identity.certificate.issuer,
                sha256Fingerprint: identity.certificate.sha256Fingerprint,
                notAfter: identity.certificate.notAfter,
                pkcs12: Data(pkcs12).base64EncodedString(),
                passphrase: passphrase
            )
        } catch {
            throw CountersignError(.internalError, "the client identity could not be packaged")
        }
    }

    static func remainingAttempts(_ plan: DecisionPlan, failures: Int) -> Int? {
        if plan.blockedUntil != nil { return 0 }
        guard plan.credential != nil, let maxFailures = plan.maxFailures else { return nil }
        // Released unblocked, it has at least this attempt: once a block ends the count stays
        // where it was (so that blocks can grow), and the next rejection blocks again.
        return max(1, maxFailures - failures)
    }
}
