public import CountersignCore
public import CountersignPostgres
public import Foundation

/// Where each client stands with each security check (`security_check_states`), and the
/// failure and success reports that move it.
///
/// Every change locks the client's row and applies a `SecurityCheckState` transition to it,
/// so concurrent reports from several instances never lose a count. Lock order: sessions,
/// decisions, credentials, counters, tenants, then security-check states (last, so that a report can record
/// the decision's outcome and the state change in one transaction).
public struct SecurityCheckStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// What answering a challenge starts from.
    public struct Challenged: Sendable {
        /// The client's state once the challenge is taken into account.
        public var state: SecurityCheckState
        /// The credential's rejections for the check since its last success or change.
        public var credentialFailures: Int
        public var credentialBlockedUntil: Date?
        /// The database's time, which every expiry is judged against.
        public var now: Date
    }

    /// The server challenged `clientID` with `securityCheck`: the client is attempting (unless
    /// it is blocked); returns that state with the counter of the credential that would answer.
    public func challenged(
        tenantID: UUID,
        securityCheck: String,
        clientID: String,
        limits: SecurityCheckLimits,
        credentialID: UUID?,
        spaceKey: String
    ) async throws -> Challenged {
        try await pool.withTransaction { connection in
            let now = try Self.now(on: connection)
            let (failures, blockedUntil) = try Self.counter(tenantID: tenantID, credentialID: credentialID, spaceKey: spaceKey, at: now, on: connection)
            let state = try Self.transition(
                tenantID: tenantID,
                securityCheck: securityCheck,
                clientID: clientID,
                event: .challenged,
                now: now,
                on: connection
            ) { SecurityCheckState.challenged($0, at: now, limits: limits) }
            return Challenged(state: state, credentialFailures: failures, credentialBlockedUntil: blockedUntil, now: now)
        }
    }

    /// `challenged` read again after a decision made from it came back stale: the credential's
    /// counter, and the client's state as it is now (the challenge already moved it; a failure
    /// reported meanwhile, which moved the counter, may have blocked the client), in one snapshot.
    /// A new counter with the old state released an answer to a client blocked since.
    public func refreshed(
        _ challenged: Challenged,
        tenantID: UUID,
        securityCheck: String,
        clientID: String,
        credentialID: UUID?,
        spaceKey: String
    ) async throws -> Challenged {
        try await pool.withTransaction { connection in
            try connection.simpleQuery("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            let now = try Self.now(on: connection)
            var refreshed = challenged
            (refreshed.credentialFailures, refreshed.credentialBlockedUntil) = try Self.counter(
                tenantID: tenantID, credentialID: credentialID, spaceKey: spaceKey, at: now, on: connection
            )
            if let state = try connection.query(
                "SELECT state, attempts, expires_at, total_failures, blocks FROM security_check_states WHERE tenant_id = $1 AND security_check = $2 AND client_id = $3",
                [.uuid(tenantID), .text(securityCheck), .text(clientID)]
            ).rows.first.map(Self.state(from:)) {
                refreshed.state = state
            }
            refreshed.now = now
            return refreshed
        }
    }

    /// A credential's rejections in a space, and its block if one runs at `now`.
    private static func counter(tenantID: UUID, credentialID: UUID?, spaceKey: String, at now: Date, on connection: PostgresConnection) throws -> (failures: Int, blockedUntil: Date?) {
        guard let credentialID,
            let counter = try connection.query(
                "SELECT failures, blocked_until FROM rejection_counters WHERE tenant_id = $1 AND credential_id = $2 AND space_key = $3",
                [.uuid(tenantID), .uuid(credentialID), .text(spaceKey)]
            ).rows.first
        else { return (0, nil) }
        return (try counter.decode("failures"), try counter.decode("blocked_until", as: Date?.self).flatMap { $0 > now ? $0 : nil })
    }

    /// What a failure or success report did.
    public struct Report: Sendable {
        /// The answer the report applied to, with its outcome, and the credential's counter.
        public var outcome: DecisionStore.OutcomeResult
        /// This report set the outcome; false when it repeated an earlier report.
        public var applied: Bool
        /// The client's state for the check after the report; `nil` when no handler counts it.
        public var state: SecurityCheckStateEntry?
    }

    /// Records the server's verdict on the last answer given for `securityCheck` in the session
    /// (or on `decisionID`, which must be such an answer): `rejected` for a failure, `accepted`
    /// for a success. The decision's outcome (and with it the credential's counter) and the
    /// client's state change together, once per decision: repeating a report changes nothing.
    /// `limits`: the handler's rules, `nil` when the check has no handler any more (the outcome
    /// is still recorded). `sessionID` must belong to the tenant (`not_found` otherwise).
    /// `onlyIfPending`: for verdicts the server implies (a re-challenge), which change nothing and
    /// return `nil` when there is no answer or its verdict is already known.
    public func report(
        tenantID: UUID,
        sessionID: UUID,
        securityCheck: String,
        outcome: Outcome,
        decisionID: UUID?,
        limits: SecurityCheckLimits?,
        failureMessage: String?,
        onlyIfPending: Bool = false
    ) async throws -> Report? {
        precondition(outcome != .cancelled, "security-check reports are failures or successes")
        return try await pool.withTransaction { connection in
            guard let session = try connection.query(
                "SELECT client_id FROM sessions WHERE tenant_id = $1 AND id = $2 FOR NO KEY UPDATE",
                [.uuid(tenantID), .uuid(sessionID)]
            ).rows.first else {
                throw CountersignError(.notFound, "no such session")
            }
            let clientID: String = try session.decode("client_id")
            let answer = try connection.query(
                """
                SELECT d.id, d.outcome IS NULL AS pending FROM decisions d
                WHERE d.tenant_id = $1 AND d.session_id = $2 AND d.kind = 'securityCheck' AND d.task_id = $3
                  AND d.disposition = 'useCredential' AND ($4::uuid IS NULL OR d.id = $4::uuid)
                  AND d.outcome_source IS DISTINCT FROM 'unsent'
                ORDER BY d.created_at DESC, d.id DESC LIMIT 1
                FOR UPDATE
                """,
                [.uuid(tenantID), .uuid(sessionID), .text(securityCheck), PostgresValue(decisionID)]
            ).rows.first
            guard let answer else {
                if onlyIfPending { return nil }
                if let decisionID {
                    throw CountersignError(.securityCheckNotAnswered, "decision \(decisionID.text) is not an answer to '\(securityCheck)' in this session")
                }
                throw CountersignError(.securityCheckNotAnswered, "no answer to '\(securityCheck)' was given in this session")
            }
            let answerID: UUID = try answer.decode("id")
            let pending: Bool = try answer.decode("pending")
            if onlyIfPending, !pending { return nil }
            guard let result = try DecisionStore.recordOutcome(
                tenantID: tenantID,
                decisionID: answerID,
                outcome: outcome,
                upstreamStatus: nil,
                source: "report",
                acceptingSecurityChecks: true,
                on: connection
            ) else {
                throw CountersignError(.internalError, "the answer vanished while it was locked")
            }
            if pending, let limits {
                let event: Event = outcome == .accepted ? .succeeded(answerID) : .failed(answerID, message: failureMessage)
                let now = try Self.now(on: connection)
                _ = try Self.transition(tenantID: tenantID, securityCheck: securityCheck, clientID: clientID, event: event, now: now, on: connection) {
                    outcome == .accepted
                        ? SecurityCheckState.succeeded($0, at: now, limits: limits)
                        : SecurityCheckState.failed($0, at: now, limits: limits)
                }
            }
            // A client challenged while a handler counted the check still has a row: not shown
            // once none does, as the contract says.
            let state = try limits.flatMap { _ in
                try Self.entries(
                    where: "s.tenant_id = $1 AND s.security_check = $2 AND s.client_id = $3",
                    [.uuid(tenantID), .text(securityCheck), .text(clientID)],
                    on: connection
                ).first
            }
            return Report(outcome: result, applied: pending, state: state)
        }
    }

    /// Records `cancelled` for answers that were recorded but never went out (the request that
    /// made them failed): left pending, the client's retry of the same list, carrying the
    /// server's `errorMsg` for the answer it did get, would count it against the last recorded.
    public func cancelUnsent(tenantID: UUID, decisionIDs: [UUID]) async throws {
        guard !decisionIDs.isEmpty else { return }
        try await pool.withTransaction { connection in
            for id in decisionIDs {
                do {
                    _ = try DecisionStore.recordOutcome(
                        tenantID: tenantID, decisionID: id, outcome: .cancelled, upstreamStatus: nil,
                        source: "unsent", acceptingSecurityChecks: true, on: connection
                    )
                } catch let error as CountersignError where error.code == .outcomeConflict {
                    // Judged already (a report raced the failure): that verdict stands.
                }
            }
        }
    }

    /// Ends the client's current state for the check at once (an admin unblocking it, say): it
    /// reads `expired`, so the next challenge starts a fresh attempting window. The totals and the
    /// history stay. `nil` when the client was never challenged for the check.
    public func reset(tenantID: UUID, securityCheck: String, clientID: String) async throws -> SecurityCheckStateEntry? {
        try await pool.withTransaction { connection in
            let key: [PostgresValue] = [.uuid(tenantID), .text(securityCheck), .text(clientID)]
            let updated = try connection.execute(
                """
                UPDATE security_check_states SET expires_at = least(expires_at, now()), attempts = 0, updated_at = now()
                WHERE tenant_id = $1 AND security_check = $2 AND client_id = $3
                """,
                key
            )
            guard updated > 0 else { return nil }
            return try Self.entries(where: "s.tenant_id = $1 AND s.security_check = $2 AND s.client_id = $3", key, on: connection).first
        }
    }

    /// One page of the states of the tenant's clients, newest first, and the
    /// cursor of the next page.
    public func list(
        tenantID: UUID,
        clientID: String?,
        securityCheck: String?,
        limit: Int,
        after cursor: String? = nil
    ) async throws -> (entries: [SecurityCheckStateEntry], next: String?) {
        let list = PageCursor.list("security-check-states", tenantID: tenantID, filters: [clientID, securityCheck])
        // The list's name, then the last row's time, check and client.
        let position = try cursor.map { try KeyCursor(text: $0, count: 4).values }
        if let position, position[0] != list || !PageCursor.isPostgresTimestamp(position[1][...]) { throw PageCursor.refused }
        return try await PageCursor.reading(withCursor: position != nil) {
            try await page(list, tenantID: tenantID, clientID: clientID, securityCheck: securityCheck, limit: limit, after: position.map { Array($0.dropFirst()) })
        }
    }

    private func page(
        _ list: String,
        tenantID: UUID,
        clientID: String?,
        securityCheck: String?,
        limit: Int,
        after position: [String]?
    ) async throws -> (entries: [SecurityCheckStateEntry], next: String?) {
        try await pool.withConnection { connection in
            let rows = try Self.rows(
                where: """
                    s.tenant_id = $1 AND ($2::text IS NULL OR s.client_id = $2::text) AND ($3::text IS NULL OR s.security_check = $3::text)
                      AND ($4::timestamptz IS NULL OR (s.created_at, s.security_check, s.client_id) < ($4::timestamptz, $5::text, $6::text))
                    """,
                [.uuid(tenantID), PostgresValue(clientID), PostgresValue(securityCheck)] + (position?.map(PostgresValue.text) ?? [.null, .null, .null]),
                limit: limit + 1,
                on: connection
            )
            let shown = rows.prefix(limit)
            let next = try rows.count > limit ? shown.last.map { last in
                KeyCursor(values: [list, try last.decode("cursor_at"), try last.decode("security_check"), try last.decode("client_id")]).text
            } : nil
            return (try shown.map(Self.entry(from:)), next)
        }
    }

    // MARK: - Rows

    /// What moved a state, for the columns that remember when things happened.
    enum Event {
        case challenged
        case failed(UUID, message: String?)
        case succeeded(UUID)
    }

    /// The transaction's time (`now()`), which SQL elsewhere in the transaction also uses.
    static func now(on connection: PostgresConnection) throws -> Date {
        try connection.query("SELECT now() AS now").rows[0].decode("now")
    }

    /// Applies `change` to the client's row under a row lock, creating the row if needed.
    static func transition(
        tenantID: UUID,
        securityCheck: String,
        clientID: String,
        event: Event,
        now: Date,
        on connection: PostgresConnection,
        _ change: (SecurityCheckState?) -> SecurityCheckState
    ) throws -> SecurityCheckState {
        let key: [PostgresValue] = [.uuid(tenantID), .text(securityCheck), .text(clientID)]
        var eventColumns: [PostgresValue] = [.null, .null, .null, .null, .null, .bool(false)]
        switch event {
        case .challenged:
            eventColumns[0] = .timestamp(now)
        case .failed(let decisionID, let message):
            eventColumns[1] = .timestamp(now)
            eventColumns[2] = PostgresValue(message)
            eventColumns[4] = .uuid(decisionID)
            eventColumns[5] = .bool(true)
        case .succeeded(let decisionID):
            eventColumns[3] = .timestamp(now)
            eventColumns[4] = .uuid(decisionID)
        }
        // Two tries: when a concurrent transaction creates the row between the read and the
        // insert, the second read waits for it and finds it.
        for _ in 0..<2 {
            let current = try connection.query(
                """
                SELECT state, attempts, expires_at, total_failures, blocks FROM security_check_states
                WHERE tenant_id = $1 AND security_check = $2 AND client_id = $3 FOR UPDATE
                """,
                key
            ).rows.first.map(Self.state(from:))
            let next = change(current)
            let values = key + [
                .text(next.stored.rawValue), .int(next.attempts), .timestamp(next.expiresAt), .int(next.totalFailures), .int(next.blocks),
            ] + eventColumns
            if current == nil {
                let inserted = try connection.execute(
                    """
                    INSERT INTO security_check_states (tenant_id, security_check, client_id, state, attempts, expires_at, total_failures,
                        blocks, last_challenge_at, last_failure_at, last_failure, last_success_at, last_decision_id)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $14::boolean THEN $11::text END, $12, $13)
                    ON CONFLICT (tenant_id, security_check, client_id) DO NOTHING
                    """,
                    values
                )
                if inserted == 0 { continue }
            } else {
                try connection.execute(
                    """
                    UPDATE security_check_states SET state = $4, attempts = $5, expires_at = $6, total_failures = $7, blocks = $8,
                        last_challenge_at = coalesce($9::timestamptz, last_challenge_at),
                        last_failure_at = coalesce($10::timestamptz, last_failure_at),
                        last_failure = CASE WHEN $14::boolean THEN $11::text ELSE last_failure END,
                        last_success_at = coalesce($12::timestamptz, last_success_at),
                        last_decision_id = coalesce($13::uuid, last_decision_id),
                        updated_at = now()
                    WHERE tenant_id = $1 AND security_check = $2 AND client_id = $3
                    """,
                    values
                )
            }
            return next
        }
        throw CountersignError(.serviceBusy, "the security-check state kept changing; retry")
    }

    static func state(from row: PostgresRow) throws -> SecurityCheckState {
        SecurityCheckState(
            stored: try row.decodeEnum("state"),
            attempts: try row.decode("attempts"),
            expiresAt: try row.decode("expires_at"),
            totalFailures: try row.decode("total_failures"),
            blocks: try row.decode("blocks")
        )
    }

    static func entries(where condition: String, _ parameters: [PostgresValue], on connection: PostgresConnection) throws -> [SecurityCheckStateEntry] {
        try rows(where: condition, parameters, limit: 1, on: connection).map(entry(from:))
    }

    /// The states `condition` selects, newest first, each with `cursor_at`: by when the client was
    /// first challenged for the check, which no later change moves past a page cursor.
    static func rows(where condition: String, _ parameters: [PostgresValue], limit: Int, on connection: PostgresConnection) throws -> [PostgresRow] {
        try connection.query(
            """
            SELECT \(SecurityCheckStateEntry.columns), s.created_at::text AS cursor_at FROM security_check_states s
            WHERE \(condition)
            ORDER BY s.created_at DESC, s.security_check DESC, s.client_id DESC
            LIMIT $\(parameters.count + 1)
            """,
            parameters + [.int(limit)]
        ).rows
    }

    static func entry(from row: PostgresRow) throws -> SecurityCheckStateEntry {
        SecurityCheckStateEntry(
            securityCheck: try row.decode("security_check"),
            clientID: try row.decode("client_id"),
            state: try Self.state(from: row),
            lastChallengeAt: try row.decode("last_challenge_at"),
            lastFailureAt: try row.decode("last_failure_at"),
            lastFailure: try row.decode("last_failure"),
            lastSuccessAt: try row.decode("last_success_at"),
            lastDecisionID: try row.decode("last_decision_id"),
            updatedAt: try row.decode("updated_at"),
            readAt: try row.decode("read_at")
        )
    }
}
