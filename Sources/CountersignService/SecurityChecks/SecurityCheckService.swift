public import CountersignCore
public import CountersignStorage
public import Foundation
public import Logging

/// Answers MobileFirst-style security checks centrally: for each check of a challenge list,
/// the tenant's handler (part of the policy) says whether to submit an answer filled from a
/// stored credential, or to cancel; checks without a handler are left to the client.
///
/// Every answer is a decision record of kind `securityCheck`, recorded through the
/// `DecisionWriter` before the answer (and the secret in it) is returned. Attempts are counted
/// per tenant, check and client in `security_check_states`, and per credential in the
/// ordinary rejection counters, under the check's own protection space
/// (`SecurityCheckEngine.protectionSpace(for:)`).
public struct SecurityCheckService: Sendable {
    let cache: DecisionStateCache
    let secrets: SecretCache
    let writer: DecisionWriter
    let store: SecurityCheckStore
    let logger: Logger

    public init(cache: DecisionStateCache, secrets: SecretCache, writer: DecisionWriter, store: SecurityCheckStore, logger: Logger) {
        self.cache = cache
        self.secrets = secrets
        self.writer = writer
        self.store = store
        self.logger = logger
    }

    /// Answers every check of `challenges`, one recorded decision each.
    ///
    /// A check sent again with an `errorMsg` says the last answer to it was wrong (MobileFirst
    /// asks again instead of failing): that answer's failure is counted first, once, exactly as
    /// a failure report would count it, unless its verdict was already reported.
    public func answer(_ challenges: SecurityCheckChallenges, for asker: DecisionService.Asker) async throws -> [String: SecurityCheckAnswer] {
        // Read fresh before anything is written (a failure a re-challenge implies, the client's
        // state for each check): a session ended, a key revoked or a handler changed through
        // another instance is refused or followed here, not after the client's state moved.
        let current = try await cache.session(asker.sessionID, tenantID: asker.tenantID, fresh: true)
        let currentTenant = try await cache.settings(answering: asker)
        guard current.session.isActive(at: currentTenant.databaseNow) else {
            throw CountersignError(.sessionInvalidated, "the session is invalidated; open a new one")
        }
        // The rounds plan from the cached state: one older than the settings just read would
        // move the client's attempts under a handler an admin changed meanwhile.
        if try await cache.tenant(answering: asker).version < currentTenant.version { cache.forgetTenant(asker.tenantID) }
        for name in challenges.names {
            guard let message = challenges.challenges[name].flatMap(SecurityCheckPayload.rechallengeMessage(in:)) else { continue }
            _ = try await record(
                .rejected, securityCheck: name, sessionID: asker.sessionID, decisionID: nil, tenantID: asker.tenantID, keyID: asker.keyID,
                failureMessage: message, onlyIfPending: true
            )
        }
        var recorded: [UUID] = []
        do {
            return try await answer(challenges, for: asker, recording: &recorded)
        } catch {
            // Answers recorded before the error never go out with it: cancelled, so that the
            // retry the error invites judges none of them (best effort: the database may be
            // what failed).
            do {
                try await uncancelled { [store, recorded] in try await store.cancelUnsent(tenantID: asker.tenantID, decisionIDs: recorded) }
            } catch let cancelError {
                logger.warning("security-check answers not sent were left pending", metadata: ["answers": "\(recorded.count)", "error": "\(cancelError)"])
            }
            throw error
        }
    }

    /// The rounds of ``answer(_:for:)``: the id of every answer recorded goes into `recorded` as
    /// soon as its commit is known, in the round that fails too.
    private func answer(_ challenges: SecurityCheckChallenges, for asker: DecisionService.Asker, recording recorded: inout [UUID]) async throws -> [String: SecurityCheckAnswer] {
        var answers: [String: SecurityCheckAnswer] = [:]
        var challenged: [String: SecurityCheckStore.Challenged] = [:]
        var pending = challenges.names
        attempts: for _ in 0..<DecisionService.attempts {
            let session = try await cache.session(asker.sessionID, tenantID: asker.tenantID)
            let tenant = try await cache.tenant(answering: asker)
            // By the database's clock, as the writer judges (`DecisionService.decideAndRecord`).
            guard session.session.isActive(at: tenant.databaseNow) else {
                throw CountersignError(.sessionInvalidated, "the session is invalidated; open a new one")
            }
            let clientID = session.session.clientId
            let policy = tenant.policy.policy

            var drafts: [Draft] = []
            for name in pending {
                let handler = policy.securityCheckHandler(named: name)
                let credentialID = handler?.credentialId.flatMap { UUID(text: $0) }
                if let handler, handler.action == .submitChallengeAnswer, challenged[name] == nil {
                    // Once per request: the server's challenge puts the client in the attempting state.
                    challenged[name] = try await store.challenged(
                        tenantID: asker.tenantID,
                        securityCheck: name,
                        clientID: clientID,
                        limits: handler.limits,
                        credentialID: credentialID,
                        spaceKey: SecurityCheckEngine.protectionSpace(for: name).key
                    )
                }
                let started = challenged[name]
                let now = started?.now ?? Date()
                let plan = SecurityCheckEngine.decide(
                    SecurityCheckInputs(
                        name: name,
                        challenge: challenges.challenges[name] ?? .null,
                        handler: handler,
                        state: started?.state,
                        credential: credentialID.flatMap { id in
                            tenant.credentials.credential(id: id).flatMap { $0.owner.persistence == .synchronizable ? $0 : nil }
                        },
                        credentialFailures: started?.credentialFailures ?? 0,
                        // Blocked in any space, as a challenge's credential is: a block counted
                        // by HTTP challenges holds here too (`tenant.version` makes a block set
                        // meanwhile turn this decision stale).
                        credentialBlockedUntil: [started?.credentialBlockedUntil, credentialID.flatMap { tenant.blockedUntil[$0] }].compactMap { $0 }.max(),
                        now: now
                    )
                )
                var answer: JSONValue?
                if plan.action == .submitChallengeAnswer, let credential = plan.decision.credential, let template = plan.template {
                    guard let password = try await secrets.password(of: credential) else {
                        forget(asker)
                        continue attempts
                    }
                    answer = template.filled(secret: password, account: credential.attributes.account, domain: credential.domain)
                }
                var record = DecisionRecord(
                    tenantID: asker.tenantID,
                    sessionID: asker.sessionID,
                    clientID: clientID,
                    keyID: asker.keyID,
                    taskID: name,
                    kind: SecurityCheckEngine.decisionKind,
                    space: SecurityCheckEngine.protectionSpace(for: name),
                    previousFailureCount: started?.state.countedAttempts(at: now) ?? 0,
                    plan: plan.decision,
                    releasedUser: plan.decision.credential?.attributes.account,
                    tenantStateVersion: tenant.version,
                    sessionStateVersion: session.version
                )
                // The stored answer goes out only if it was not refused too often: a rejection
                // counted meanwhile (in another session) makes this decision stale.
                if plan.decision.credential != nil { record.expectedFailures = started?.credentialFailures }
                drafts.append(Draft(name: name, plan: plan, record: record, answer: answer))
            }

            // Every write is waited for, the failing ones too: one that committed beside a failure
            // must be known, to be cancelled with the rest. Tasks of their own, not a task group:
            // the group's (index, result) pairs came back corrupted in release builds of Swift
            // 6.3 and trapped the process on the first list answered.
            let writes = drafts.map { draft in Task { try await writer.record(draft.record) } }
            var results: [Result<DecisionCommit, any Error>] = []
            for write in writes { results.append(await write.result) }
            var commits: [DecisionCommit] = []
            for (draft, result) in zip(drafts, results) {
                if case .success(.recorded) = result { recorded.append(draft.record.id) }
            }
            for result in results { commits.append(try result.get()) }
            if commits.contains(.sessionEnded) {
                // Ended by the database's clock, which may run ahead of this instance's (see
                // `DecisionService.decideAndRecord`): deciding again cannot help, and no check is
                // answered in a session that has ended.
                cache.forgetSession(asker.sessionID)
                throw CountersignError(.sessionInvalidated, "the session is invalidated; open a new one")
            }
            for (draft, commit) in zip(drafts, commits) where commit != .stale {
                let plan = draft.plan
                answers[draft.name] = SecurityCheckAnswer(
                    action: plan.action,
                    answer: draft.answer,
                    decisionId: draft.record.id,
                    persistence: plan.decision.persistence,
                    remainingAttempts: plan.remainingAttempts,
                    state: plan.state,
                    blockedUntil: plan.decision.blockedUntil,
                    reason: plan.decision.reason
                )
                DecisionMetrics.shared.answered(plan.action)
            }
            pending = pending.filter { answers[$0] == nil }
            if pending.isEmpty { return answers }
            forget(asker)
            for name in pending {
                guard let started = challenged[name], let handler = policy.securityCheckHandler(named: name) else { continue }
                challenged[name] = try await store.refreshed(
                    started,
                    tenantID: asker.tenantID,
                    securityCheck: name,
                    clientID: clientID,
                    credentialID: handler.credentialId.flatMap { UUID(text: $0) },
                    spaceKey: SecurityCheckEngine.protectionSpace(for: name).key
                )
            }
        }
        throw CountersignError(.serviceBusy, "the tenant's policy or credentials kept changing during the decision; retry")
    }

    /// A failure (`rejected`) or success (`accepted`) the server sent for `securityCheck`,
    /// applied to the last answer given for it in the session (or to `decisionID`).
    public func report(
        _ outcome: Outcome,
        payload: JSONValue,
        securityCheck: String,
        sessionID: UUID,
        decisionID: UUID?,
        tenantID: UUID,
        keyID: UUID
    ) async throws -> SecurityCheckReport {
        try SecurityCheckName.validate(securityCheck, field: "securityCheck")
        try SecurityCheckPayload.validateReport(payload, field: outcome == .accepted ? "success" : "failure")
        guard let report = try await record(
            outcome, securityCheck: securityCheck, sessionID: sessionID, decisionID: decisionID, tenantID: tenantID, keyID: keyID,
            failureMessage: outcome == .rejected ? SecurityCheckPayload.failureMessage(in: payload) : nil, onlyIfPending: false
        ) else {
            throw CountersignError(.internalError, "a report changed nothing without saying why")
        }
        return report
    }

    private func record(
        _ outcome: Outcome,
        securityCheck: String,
        sessionID: UUID,
        decisionID: UUID?,
        tenantID: UUID,
        keyID: UUID,
        failureMessage: String?,
        onlyIfPending: Bool
    ) async throws -> SecurityCheckReport? {
        // The handler as it is now: a report through this instance counts against the limits an
        // admin set through any, and not with a key revoked through any.
        let handler = try await cache.settings(tenantID, answering: keyID).policy.policy.securityCheckHandler(named: securityCheck)
        let limits = Self.countingLimits(of: handler)
        guard let report = try await store.report(
            tenantID: tenantID,
            sessionID: sessionID,
            securityCheck: securityCheck,
            outcome: outcome,
            decisionID: decisionID,
            limits: limits,
            failureMessage: failureMessage,
            onlyIfPending: onlyIfPending
        ) else { return nil }
        cache.forget(changedBy: report.outcome, tenantID: tenantID)
        return SecurityCheckReport(
            decision: report.outcome.decision,
            applied: report.applied,
            counter: report.outcome.counter,
            state: report.state.map { SecurityCheckStateView($0, limits: limits) }
        )
    }

    /// Ends a client's state for a check (see `SecurityCheckStore.reset`).
    public func reset(tenantID: UUID, securityCheck: String, clientID: String) async throws -> SecurityCheckStateView {
        try SecurityCheckName.validate(securityCheck, field: "securityCheck")
        try Validation.name(clientID, field: "clientId")
        guard let entry = try await store.reset(tenantID: tenantID, securityCheck: securityCheck, clientID: clientID) else {
            throw CountersignError(.notFound, "client '\(clientID)' was never challenged for '\(securityCheck)'")
        }
        // The policy as it stands; no cached state holds security-check states, so none is forgotten.
        let handler = try await cache.settings(tenantID).policy.policy.securityCheckHandler(named: securityCheck)
        return SecurityCheckStateView(entry, limits: Self.countingLimits(of: handler))
    }

    /// One page of the tenant's clients' states, newest first, and the cursor of the next page.
    public func states(
        tenantID: UUID,
        clientID: String?,
        securityCheck: String?,
        limit: Int,
        after cursor: String?
    ) async throws -> (entries: [SecurityCheckStateView], next: String?) {
        if let securityCheck { try SecurityCheckName.validate(securityCheck, field: "securityCheck") }
        let policy = try await cache.settings(tenantID).policy.policy
        let page = try await store.list(tenantID: tenantID, clientID: clientID, securityCheck: securityCheck, limit: limit, after: cursor)
        let views = page.entries.map { entry in
            SecurityCheckStateView(entry, limits: Self.countingLimits(of: policy.securityCheckHandler(named: entry.securityCheck)))
        }
        return (views, page.next)
    }

    /// The attempt rules a check is counted by: only handlers that answer count attempts.
    private static func countingLimits(of handler: SecurityCheckHandler?) -> SecurityCheckLimits? {
        handler.flatMap { $0.action == .submitChallengeAnswer ? $0.limits : nil }
    }

    private func forget(_ asker: DecisionService.Asker) {
        cache.forgetTenant(asker.tenantID)
        cache.forgetSession(asker.sessionID)
    }

    /// One check's answer, decided and waiting to be recorded.
    private struct Draft: Sendable {
        var name: String
        var plan: SecurityCheckPlan
        var record: DecisionRecord
        var answer: JSONValue?
    }
}
