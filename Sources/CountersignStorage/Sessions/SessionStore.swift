public import CountersignCore
public import CountersignPostgres
public import Foundation

/// Sessions: created by clients, invalidated explicitly in URLSession's two ways or by expiry.
public struct SessionStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    static let columns = """
        s.id, s.tenant_id, s.client_id, s.label, s.created_at, s.expires_at, s.invalidated_at, s.invalidation_reason,
        s.invalidation_mode, s.state_version
        """

    public func create(tenantID: UUID, clientID: String, label: String?, ttlSeconds: Int, keyID: UUID) async throws -> Session {
        try await pool.withConnection { connection in
            let rows = try connection.query(
                """
                INSERT INTO sessions AS s (id, tenant_id, client_id, label, created_by_key, expires_at)
                VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))
                RETURNING \(Self.columns)
                """,
                [.uuid(UUID.random()), .uuid(tenantID), .text(clientID), PostgresValue(label), .uuid(keyID), .int(ttlSeconds)]
            )
            return try Self.session(from: rows.rows[0])
        }
    }

    /// The session as it stands by the database's clock, which is the one that ends it for
    /// decisions: an expired session reads as invalidated by expiry before the sweeper records it.
    public func get(tenantID: UUID, id: UUID) async throws -> Session? {
        try await pool.withConnection { connection in
            try connection.query(
                "SELECT \(Self.columns), now() AS database_now FROM sessions s WHERE s.tenant_id = $1 AND s.id = $2",
                [.uuid(tenantID), .uuid(id)]
            )
            .rows.first.map { row in try Self.session(from: row).observed(at: try row.decode("database_now")) }
        }
    }

    /// Invalidates a session: its memory and its `forSession` credentials are dropped and,
    /// with `cancel`, its pending decisions become `cancelled`. Invalidating an invalidated
    /// session again changes nothing, except that `cancel` still cancels what is pending.
    /// `nil` when the tenant has no such session.
    public func invalidate(tenantID: UUID, id: UUID, mode: InvalidationMode) async throws -> Session? {
        try await pool.withTransaction { connection in
            let updated = try connection.query(
                """
                UPDATE sessions AS s SET
                    invalidated_at = CASE WHEN s.expires_at <= now() THEN s.expires_at ELSE now() END,
                    invalidation_reason = CASE WHEN s.expires_at <= now() THEN 'expired' ELSE 'explicit' END,
                    invalidation_mode = $3, state_version = s.state_version + 1
                WHERE s.tenant_id = $1 AND s.id = $2 AND s.invalidated_at IS NULL
                RETURNING \(Self.columns)
                """,
                [.uuid(tenantID), .uuid(id), .text(mode.rawValue)]
            )
            var session = try updated.rows.first.map(Self.session(from:))
            if session == nil {
                guard let existing = try connection.query(
                    "SELECT \(Self.columns) FROM sessions s WHERE s.tenant_id = $1 AND s.id = $2 FOR UPDATE",
                    [.uuid(tenantID), .uuid(id)]
                ).rows.first.map(Self.session(from:)) else { return nil }
                session = existing
                if mode == .cancel, existing.invalidationMode != .cancel {
                    try connection.execute("UPDATE sessions SET invalidation_mode = 'cancel' WHERE id = $1", [.uuid(id)])
                    session?.invalidationMode = .cancel
                }
            }
            try Self.dropMemory(of: [id], on: connection)
            if mode == .cancel {
                try connection.execute(
                    "UPDATE decisions SET outcome = 'cancelled', outcome_at = now(), outcome_source = 'session' WHERE session_id = $1 AND outcome IS NULL",
                    [.uuid(id)]
                )
            }
            return session
        }
    }

    /// Records the expiry of sessions past their time, at most `limit` per call, and drops
    /// what they remembered. Returns how many expired.
    public func expireDue(limit: Int = 500) async throws -> Int {
        try await pool.withTransaction { connection in
            let expired = try connection.query(
                """
                UPDATE sessions SET invalidated_at = expires_at, invalidation_reason = 'expired', invalidation_mode = 'finishTasks',
                    state_version = state_version + 1
                WHERE id IN (
                    SELECT id FROM sessions WHERE invalidated_at IS NULL AND expires_at <= now()
                    ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
                RETURNING id
                """,
                [.int(limit)]
            )
            let ids = try expired.rows.map { try $0.decode("id", as: UUID.self) }
            try Self.dropMemory(of: ids, on: connection)
            return ids.count
        }
    }

    /// Deletes up to `limit` sessions that ended before `cutoff`, and says how many went. What
    /// they remembered and their `forSession` credentials went when they ended; their decisions
    /// are kept for as long as decisions are.
    public func purge(endedBefore cutoff: Date, limit: Int = 5000) async throws -> Int {
        try await pool.withConnection { connection in
            try connection.execute(
                """
                DELETE FROM sessions WHERE id IN (
                    SELECT id FROM sessions WHERE invalidated_at IS NOT NULL AND invalidated_at < $1
                    ORDER BY invalidated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
                """,
                [.timestamp(cutoff), .int(limit)]
            )
        }
    }

    static func dropMemory(of sessionIDs: [UUID], on connection: PostgresConnection) throws {
        guard !sessionIDs.isEmpty else { return }
        let ids = PostgresValue.textArray(sessionIDs.map { $0.text })
        try connection.execute("DELETE FROM session_memory WHERE session_id = ANY($1::uuid[])", [ids])
        // Their history says when and why they went, as an admin's delete does.
        let credentials = try connection.query(
            """
            WITH gone AS (
                DELETE FROM credentials WHERE owner = 'session' AND owner_session_id = ANY($1::uuid[])
                RETURNING id, tenant_id, owner_session_id)
            INSERT INTO credential_history (tenant_id, credential_id, event, actor, details)
            SELECT tenant_id, id, 'deleted', 'session:' || owner_session_id, '{"reason": "its session ended"}'::jsonb FROM gone
            RETURNING credential_id
            """,
            [ids]
        ).rows.map { try $0.decode("credential_id", as: UUID.self) }
        try CredentialStore.deleteDependents(of: credentials, on: connection)
    }

    static func session(from row: PostgresRow) throws -> Session {
        Session(
            id: try row.decode("id"),
            tenantID: try row.decode("tenant_id"),
            clientId: try row.decode("client_id"),
            label: try row.decode("label"),
            createdAt: try row.decode("created_at"),
            expiresAt: try row.decode("expires_at"),
            invalidatedAt: try row.decode("invalidated_at"),
            invalidationReason: try row.decode("invalidation_reason", as: String?.self).flatMap(InvalidationReason.init(rawValue:)),
            invalidationMode: try row.decode("invalidation_mode", as: String?.self).flatMap(InvalidationMode.init(rawValue:))
        )
    }
}
