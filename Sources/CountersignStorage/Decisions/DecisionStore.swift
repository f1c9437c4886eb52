public import CountersignCore
public import CountersignPostgres
public import Foundation

/// Decision records after they are written: outcomes, rejection counting, the audit listing.
public struct DecisionStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    static let columns = """
        d.id, d.session_id, d.client_id, d.key_id, d.task_id, d.kind, d.host, d.port, d.protocol, d.realm,
        d.authentication_method, d.is_proxy, d.previous_failure_count, d.disposition, d.persistence, d.scope, d.source,
        d.reason, d.rule_id, d.rule_name, d.credential_id, d.blocked_until, d.created_at, d.outcome, d.outcome_status,
        d.outcome_at, d.outcome_source, d.counted, d.created_at::text AS cursor_at
        """

    /// The result of reporting an outcome.
    public struct OutcomeResult: Sendable {
        public var decision: DecisionEntry
        /// This report counted a rejection (false when it repeated an earlier report).
        public var counted: Bool
        /// The counter after this report, when a credential was involved.
        public var counter: CounterState?
        /// The tenant's decision state changed (the credential is blocked now): caches of it
        /// should reload.
        public var tenantStateChanged: Bool
        /// The session's decision state changed (it forgot the rejected credential): caches of
        /// it should reload. A rejection that blocks nothing leaves the tenant's state as it was.
        public var sessionStateChanged: Bool
    }

    /// A rejection counter right after a change.
    public struct CounterState: Sendable, Hashable {
        public var failures: Int
        public var maxFailures: Int?
        public var blockedUntil: Date?
    }

    /// Deletes up to `limit` decisions per tenant made before `cutoff`, oldest first, and says
    /// how many went. Tenant by tenant, so that each deletion walks the tenant and time index
    /// the listing uses, and the hot insert needs no index of its own for this.
    public func purge(madeBefore cutoff: Date, limit: Int = 5000) async throws -> Int {
        try await pool.withConnection { connection in
            try connection.execute(
                """
                DELETE FROM decisions WHERE id IN (
                    SELECT old.id FROM tenants t
                    CROSS JOIN LATERAL (
                        SELECT d.id FROM decisions d WHERE d.tenant_id = t.id AND d.created_at < $1
                        ORDER BY d.created_at LIMIT $2
                    ) old
                )
                """,
                [.timestamp(cutoff), .int(limit)]
            )
        }
    }

    public func get(tenantID: UUID, id: UUID) async throws -> DecisionEntry? {
        try await pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM decisions d WHERE d.tenant_id = $1 AND d.id = $2", [.uuid(tenantID), .uuid(id)])
                .rows.first.map(Self.entry(from:))
        }
    }

    /// Records the outcome of a decision, once: the same outcome again changes nothing; a
    /// different one is `outcome_conflict`. A rejection of a released credential counts
    /// against it and may block it; an acceptance resets its count; a rejection with upstream
    /// status 403 is recorded as `refused` and not counted. `nil`: no such decision.
    ///
    /// `reportedBy`: the key of a client that reports the outcome itself, refused
    /// (`invalid_api_key`, `tenant_disabled`) with nothing recorded when the database says it was
    /// revoked or its tenant disabled, as an instance that has not heard of that yet would take it.
    public func reportOutcome(
        tenantID: UUID,
        decisionID: UUID,
        outcome: Outcome,
        upstreamStatus: Int?,
        source: String,
        reportedBy keyID: UUID? = nil
    ) async throws -> OutcomeResult? {
        try await pool.withTransaction { connection in
            try Self.recordOutcome(
                tenantID: tenantID, decisionID: decisionID, outcome: outcome, upstreamStatus: upstreamStatus, source: source,
                acceptingSecurityChecks: false, reportedBy: keyID, on: connection
            )
        }
    }

    /// `reportOutcome` in the caller's transaction, which must not have locked anything that
    /// comes after sessions in the lock order (sessions, decisions, credentials, counters, tenants).
    static func recordOutcome(
        tenantID: UUID,
        decisionID: UUID,
        outcome: Outcome,
        upstreamStatus: Int?,
        source: String,
        acceptingSecurityChecks: Bool,
        reportedBy keyID: UUID? = nil,
        on connection: PostgresConnection
    ) throws -> OutcomeResult? {
        let outcome = Outcome.recorded(outcome, upstreamStatus: upstreamStatus)
        // The reporter's access is read with the decision: no round trip more per outcome.
        guard let found = try connection.query(
            """
            SELECT d.session_id, t.disabled_at IS NOT NULL AS disabled,
                EXISTS (SELECT 1 FROM api_keys k WHERE k.id = $3 AND k.revoked_at IS NOT NULL) AS revoked
            FROM decisions d JOIN tenants t ON t.id = d.tenant_id
            WHERE d.tenant_id = $1 AND d.id = $2
            """,
            [.uuid(tenantID), .uuid(decisionID), PostgresValue(keyID)]
        ).rows.first else { return nil }
        if keyID != nil {
            if try found.decode("disabled", as: Bool.self) { throw CountersignError.tenantIsDisabled }
            if try found.decode("revoked", as: Bool.self) { throw CountersignError.apiKeyNotValid }
        }
        let sessionID: UUID = try found.decode("session_id")
        // Lock order of every transaction here: sessions, decisions, credentials, counters, tenants.
        try connection.execute("SELECT 1 FROM sessions WHERE id = $1 FOR NO KEY UPDATE", [.uuid(sessionID)])
        // Gone since the first read only if the retention sweep deleted it meanwhile.
        guard let row = try connection.query(
            """
            SELECT \(Self.columns), d.space_key, d.max_failures, d.block_seconds, d.block_increment_seconds, d.max_block_seconds,
                d.tenant_version, \(Self.heldByContinuation) AS continued
            FROM decisions d
            WHERE d.id = $1 FOR UPDATE OF d
            """,
            [.uuid(decisionID)]
        ).rows.first else { return nil }
        let decision = try Self.entry(from: row)
        if decision.kind == SecurityCheckEngine.decisionKind, !acceptingSecurityChecks {
            throw CountersignError(
                .securityCheckDecision,
                "this decision answered a security check: report its outcome to "
                    + "POST /v1/sessions/{sessionId}/security-checks/{securityCheck}/success or /failure, which also count the client's attempts"
            )
        }
        // A response that went on from this release (`claimContinuation`) holds its attempt. A copy
        // of it that read the release before that, and found it failing only after, is late, not a
        // second verdict on the attempt: it is refused as the claim refuses an earlier copy.
        if source == "response", decision.outcome == nil, try row.decode("continued", as: Bool.self) {
            throw CountersignError.attemptAlreadyContinued(taskID: decision.taskId, decisionID: decision.id)
        }
        if let existing = decision.outcome {
            guard existing == outcome else {
                throw CountersignError(.outcomeConflict, "this decision's outcome is already '\(existing.rawValue)'")
            }
            return OutcomeResult(decision: decision, counted: false, counter: nil, tenantStateChanged: false, sessionStateChanged: false)
        }
        // What this outcome does to the credential's counter is worked out first and written
        // last, just before the commit: every outcome of the credential, from any session or
        // instance, waits for the counter row, so the less is done while holding it, the more
        // rejections a burst of them counts per second.
        enum CounterChange {
            case count(credentialID: UUID, maxFailures: Int?, schedule: BlockSchedule)
            case reset(credentialID: UUID)
        }
        var counterChange: CounterChange?
        var sessionStateChanged = false
        if outcome == .rejected, decision.disposition == .useCredential, let credentialID = decision.credentialId,
            let account = try Self.accountHoldingReleasedSecret(credentialID, releasedAt: try row.decode("tenant_version"), on: connection)
        {
            let limits = try Self.rejectionLimits(of: decision, releasing: (credentialID, account), recorded: row, tenantID: tenantID, on: connection)
            counterChange = .count(credentialID: credentialID, maxFailures: limits.maxFailures, schedule: limits.schedule)
            // The session forgets a credential that was just rejected.
            let forgotten = try connection.execute(
                "DELETE FROM session_memory WHERE session_id = $1 AND credential_id = $2",
                [.uuid(sessionID), .uuid(credentialID)]
            )
            if forgotten > 0 {
                try connection.execute("UPDATE sessions SET state_version = state_version + 1 WHERE id = $1", [.uuid(sessionID)])
                sessionStateChanged = true
            }
        } else if outcome == .accepted, let credentialID = decision.credentialId,
            try Self.accountHoldingReleasedSecret(credentialID, releasedAt: try row.decode("tenant_version"), on: connection) != nil
        {
            counterChange = .reset(credentialID: credentialID)
        }
        var counted = false
        if case .count = counterChange { counted = true }
        let updated = try connection.query(
            """
            UPDATE decisions AS d SET outcome = $2, outcome_status = $3, outcome_at = now(), outcome_source = $4, counted = $5
            WHERE d.id = $1 RETURNING \(Self.columns)
            """,
            [.uuid(decisionID), .text(outcome.rawValue), PostgresValue(upstreamStatus), .text(source), .bool(counted)]
        )
        var counter: CounterState?
        switch counterChange {
        case .count(let credentialID, let maxFailures, let schedule):
            counter = try RejectionCounting.count(
                tenantID: tenantID,
                credentialID: credentialID,
                spaceKey: try row.decode("space_key"),
                clientID: decision.clientId,
                maxFailures: maxFailures,
                schedule: schedule,
                on: connection
            )
        case .reset(let credentialID):
            try connection.execute(
                """
                UPDATE rejection_counters SET failures = 0, repeated_blocks = 0, updated_at = now()
                WHERE tenant_id = $1 AND credential_id = $2 AND space_key = $3 AND (failures > 0 OR repeated_blocks > 0)
                """,
                [.uuid(tenantID), .uuid(credentialID), .text(try row.decode("space_key"))]
            )
        case nil:
            break
        }
        return OutcomeResult(
            decision: try Self.entry(from: updated.rows[0]),
            counted: counted,
            counter: counter,
            tenantStateChanged: counter?.blockedUntil != nil,
            sessionStateChanged: sessionStateChanged
        )
    }

    /// The limit a rejection of `decision`, which released `credential`, counts against: the
    /// policy's now (`Policy.rejectionLimits`), read in this transaction, or the one the decision
    /// was made with when nothing would release the credential in its space any more.
    private static func rejectionLimits(
        of decision: DecisionEntry,
        releasing credential: (id: UUID, account: String),
        recorded row: PostgresRow,
        tenantID: UUID,
        on connection: PostgresConnection
    ) throws -> (maxFailures: Int?, schedule: BlockSchedule) {
        let policy = try PolicyStore.current(tenantID: tenantID, lock: false, on: connection)?.policy ?? .empty
        let current: RejectionLimits?
        if decision.kind == SecurityCheckEngine.decisionKind {
            current = policy.rejectionLimits(forSecurityCheck: decision.taskId, releasing: credential.id)
        } else {
            let space = decision.protectionSpace
            current = policy.rejectionLimits(
                for: ProtectionSpace(
                    host: space.host,
                    port: space.port,
                    protocolName: space.protocol,
                    realm: space.realm,
                    authenticationMethod: AuthenticationMethod(rawValue: space.authenticationMethod),
                    isProxy: space.isProxy
                ),
                releasing: credential
            )
        }
        if let current { return (current.maxFailures, current.schedule) }
        return (
            try row.decode("max_failures"),
            BlockSchedule(
                seconds: try row.decode("block_seconds", as: Int?.self) ?? BlockSchedule.default.seconds,
                incrementSeconds: try row.decode("block_increment_seconds", as: Int?.self) ?? BlockSchedule.default.incrementSeconds,
                maximumSeconds: try row.decode("max_block_seconds", as: Int?.self) ?? BlockSchedule.default.maximumSeconds
            )
        )
    }

    /// The account of the credential a decision made from tenant state `version` released, if it
    /// still exists and holds the secret released then; `nil` otherwise. A decision that released
    /// a secret replaced since says nothing about the current one: its rejection is recorded and
    /// counts nothing, its acceptance resets nothing.
    ///
    /// Read FOR SHARE before the counter is touched (lock order: sessions, decisions, credentials,
    /// counters, tenants): an admin's change of the secret that is under way holds the row until
    /// it commits, so this reads the version that change sets, and an outcome of the old secret
    /// cannot count against the new one, or reset its count, however the two overlap.
    private static func accountHoldingReleasedSecret(_ credentialID: UUID, releasedAt version: Int?, on connection: PostgresConnection) throws -> String? {
        guard let row = try connection.query(
            "SELECT account, $2::int8 < secret_tenant_version AS replaced FROM credentials WHERE id = $1 FOR SHARE",
            [.uuid(credentialID), PostgresValue(version)]
        ).rows.first, try row.decode("replaced", as: Bool?.self) != true else { return nil }
        return try row.decode("account")
    }

    /// Forgets what a session remembered for `memoryKey` if it still names `credentialID`: an
    /// answer that no longer holds (its credential moved away from the space, its identity
    /// expired), so that the answer decided in its place can be remembered. Moves the session's
    /// state version, as every change of its memory does.
    public func forgetRemembered(sessionID: UUID, memoryKey: String, credentialID: UUID) async throws {
        try await pool.withTransaction { connection in
            try connection.execute("SELECT 1 FROM sessions WHERE id = $1 FOR NO KEY UPDATE", [.uuid(sessionID)])
            let forgotten = try connection.execute(
                "DELETE FROM session_memory WHERE session_id = $1 AND space_key = $2 AND credential_id = $3",
                [.uuid(sessionID), .text(memoryKey), .uuid(credentialID)]
            )
            if forgotten > 0 {
                try connection.execute("UPDATE sessions SET state_version = state_version + 1 WHERE id = $1", [.uuid(sessionID)])
            }
        }
    }

    /// How a retry names the user it was given.
    public enum RetryUser: Sendable {
        /// Exactly as released.
        case exact(String)
        /// A Windows account (NTLM, Negotiate), in any of its forms (``WindowsAccountName``): it
        /// names the released user case-insensitively, as Windows compares accounts, and the
        /// domain it gives, if any, must be the released credential's, when that has one (NetBIOS
        /// and DNS forms alike: their first labels compare).
        case windowsAccount(String)
        /// Whoever was released: a client certificate's retry names no user (Apple's identity
        /// credentials have none), and the space's release is the identity it rejects.
        case anyone

        /// Whether the retry names `releasedUser`, released from a credential of `domain`.
        func names(_ releasedUser: String?, ofDomain domain: String?) -> Bool {
            switch (self, releasedUser) {
            case (.anyone, _):
                true
            case (_, nil):
                false
            case (.exact(let name), .some(let releasedUser)):
                name == releasedUser
            case (.windowsAccount(let name), .some(let releasedUser)):
                name == releasedUser || WindowsAccountName(name).names(WindowsAccountName(releasedUser, domain: domain))
            }
        }
    }

    /// The release for a protection space a retry at `failureCount` naming `user` rejects: the
    /// latest decision of the session's task that released a credential there for an earlier
    /// attempt (a lower failure count), if it released `user` (`anyone`: an identity, released to
    /// no user), whatever its outcome (a retry of a release already judged counts nothing more).
    /// A release at the retry's own failure count or later answered this retry, or a copy of it
    /// forwarded twice, and was not yet tried. With `ofAnyTask` (NTLM and Negotiate, whose failed
    /// handshake comes back on whichever task opened the connection) and no such release of the
    /// task's own, the latest release to another task of the session still without an outcome,
    /// if it released `user`.
    ///
    /// The names compare here rather than in SQL: Windows account names compare
    /// case-insensitively across Unicode (``WindowsAccountName/names(_:)``), which PostgreSQL's
    /// `lower()` does not do under the C locale. One row each, so that a retry costs the same
    /// however many releases the session holds.
    public func lastRelease(sessionID: UUID, retry: Retry) async throws -> DecisionEntry? {
        try await pool.withConnection { connection in try Self.lastRelease(sessionID: sessionID, retry: retry, on: connection) }
    }

    /// A challenge forwarded again after a failure, as `lastRelease` reads it.
    public struct Retry: Sendable {
        public var taskID: String
        public var failureCount: Int
        public var ofAnyTask: Bool
        public var spaceKey: String
        public var user: RetryUser
        /// The status of the response that failed, recorded with the rejection.
        public var upstreamStatus: Int?

        public init(taskID: String, failureCount: Int, ofAnyTask: Bool, spaceKey: String, user: RetryUser, upstreamStatus: Int?) {
            self.taskID = taskID
            self.failureCount = failureCount
            self.ofAnyTask = ofAnyTask
            self.spaceKey = spaceKey
            self.user = user
            self.upstreamStatus = upstreamStatus
        }
    }

    static func lastRelease(sessionID: UUID, retry: Retry, on connection: PostgresConnection) throws -> DecisionEntry? {
        // A security check's answer is judged by the check's own reports, which also count the
        // client's attempts: a challenge made to look like its retry rejects nothing.
        let released = "d.session_id = $1 AND d.space_key = $2 AND d.disposition = 'useCredential' AND d.kind <> 'securityCheck'"
        let earlierAttempt = "d.task_id = $3 AND d.previous_failure_count < $4"
        let select = "SELECT \(Self.columns), d.released_user, c.domain AS credential_domain FROM decisions d LEFT JOIN credentials c ON c.id = d.credential_id"
        let parameters: [PostgresValue] = [.uuid(sessionID), .text(retry.spaceKey), .text(retry.taskID), .int(Int64(retry.failureCount))]
        func named(_ row: PostgresRow?) throws -> DecisionEntry? {
            guard let row else { return nil }
            let releasedUser: String? = try row.decode("released_user")
            let domain: String? = try row.decode("credential_domain")
            return retry.user.names(releasedUser, ofDomain: domain) ? try Self.entry(from: row) : nil
        }
        // Two statements rather than one with an OR: the first walks the session's task index.
        if let own = try connection.query(
            "\(select) WHERE \(released) AND \(earlierAttempt) ORDER BY d.created_at DESC, d.id DESC LIMIT 1",
            parameters
        ).rows.first {
            return try named(own)
        }
        guard retry.ofAnyTask else { return nil }
        // A retry the task's own decision at its failure count (or later) answered already is a
        // copy forwarded twice: another task's release is not its to reject again.
        let answered = "EXISTS (SELECT 1 FROM decisions o WHERE o.session_id = $1 AND o.space_key = $2 AND o.task_id = $3 AND o.previous_failure_count >= $4)"
        return try named(
            connection.query(
                """
                \(select) WHERE \(released) AND d.outcome IS NULL AND (d.task_id <> $3 OR \(earlierAttempt)) AND NOT \(answered)
                ORDER BY d.created_at DESC, d.id DESC LIMIT 1
                """,
                parameters
            ).rows.first
        )
    }

    /// Filters of the decision listing; `nil` fields do not filter.
    public struct Filter: Sendable {
        public var sessionID: UUID?
        public var clientID: String?
        public var credentialID: UUID?
        public var disposition: Disposition?
        public var since: Date?
        public var until: Date?

        public init(sessionID: UUID? = nil, clientID: String? = nil, credentialID: UUID? = nil, disposition: Disposition? = nil, since: Date? = nil, until: Date? = nil) {
            self.sessionID = sessionID
            self.clientID = clientID
            self.credentialID = credentialID
            self.disposition = disposition
            self.since = since
            self.until = until
        }
    }

    /// One page of decisions, newest first, and the cursor of the next page.
    public func list(tenantID: UUID, filter: Filter, limit: Int, after cursor: String?) async throws -> (entries: [DecisionEntry], next: String?) {
        let list = PageCursor.list(
            "decisions", tenantID: tenantID,
            filters: [
                filter.sessionID?.text, filter.clientID, filter.credentialID?.text, filter.disposition?.rawValue,
                filter.since.map { "\($0.timeIntervalSince1970)" }, filter.until.map { "\($0.timeIntervalSince1970)" },
            ]
        )
        return try await PageCursor.paging(list, after: cursor) { position in
            try await page(list, tenantID: tenantID, filter: filter, limit: limit, after: position)
        }
    }

    private func page(
        _ list: String, tenantID: UUID, filter: Filter, limit: Int, after position: PageCursor?
    ) async throws -> (entries: [DecisionEntry], next: String?) {
        try await pool.withConnection { connection in
            let rows = try connection.query(
                """
                SELECT \(Self.columns) FROM decisions d
                WHERE d.tenant_id = $1
                  AND ($2::uuid IS NULL OR d.session_id = $2::uuid)
                  AND ($3::text IS NULL OR d.client_id = $3::text)
                  AND ($4::uuid IS NULL OR d.credential_id = $4::uuid)
                  AND ($5::text IS NULL OR d.disposition = $5::text)
                  AND ($6::timestamptz IS NULL OR d.created_at >= $6::timestamptz)
                  AND ($7::timestamptz IS NULL OR d.created_at < $7::timestamptz)
                  AND ($8::timestamptz IS NULL OR (d.created_at, d.id) < ($8::timestamptz, $9::uuid))
                ORDER BY d.created_at DESC, d.id DESC
                LIMIT $10
                """,
                [
                    .uuid(tenantID), PostgresValue(filter.sessionID), PostgresValue(filter.clientID), PostgresValue(filter.credentialID),
                    PostgresValue(filter.disposition?.rawValue), PostgresValue(filter.since), PostgresValue(filter.until),
                    PostgresValue(position?.at), PostgresValue(position?.id), .int(limit + 1),
                ]
            ).rows
            return try PageCursor.page(list, of: rows, limit: limit, Self.entry(from:))
        }
    }

    static func entry(from row: PostgresRow) throws -> DecisionEntry {
        let ruleID: String? = try row.decode("rule_id")
        let outcome: String? = try row.decode("outcome")
        return DecisionEntry(
            id: try row.decode("id"),
            sessionId: try row.decode("session_id"),
            clientId: try row.decode("client_id"),
            keyId: try row.decode("key_id"),
            taskId: try row.decode("task_id"),
            kind: try row.decode("kind"),
            protectionSpace: .init(
                host: try row.decode("host"),
                port: try row.decode("port"),
                protocol: try row.decode("protocol"),
                realm: try row.decode("realm"),
                authenticationMethod: try row.decode("authentication_method"),
                isProxy: try row.decode("is_proxy")
            ),
            previousFailureCount: try row.decode("previous_failure_count"),
            disposition: try row.decodeEnum("disposition"),
            persistence: try row.decodeEnum("persistence"),
            scope: try row.decodeEnum("scope"),
            source: try row.decode("source"),
            reason: try row.decode("reason"),
            rule: try ruleID.map { RuleReference(id: $0, name: try row.decode("rule_name")) },
            credentialId: try row.decode("credential_id"),
            blockedUntil: try row.decode("blocked_until"),
            createdAt: try row.decode("created_at"),
            outcome: outcome.flatMap(Outcome.init(rawValue:)),
            outcomeStatus: try row.decode("outcome_status"),
            outcomeAt: try row.decode("outcome_at"),
            outcomeSource: try row.decode("outcome_source"),
            countedRejection: try row.decode("counted")
        )
    }
}
