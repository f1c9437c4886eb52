public import CountersignCore
public import CountersignPostgres
public import Foundation

/// Reads what decisions are made from, for the caches of the decision service.
///
/// Each load reads the state version first and the data after it: a change committed in
/// between makes the data newer than the version, which only costs a stale commit and a
/// reload. The other order could pair old data with a new version.
public struct DecisionStateStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// A tenant's policy, credentials and blocks, at `version`.
    public struct TenantState: Sendable {
        public var version: Int64
        public var disabled: Bool
        /// The tenant's keys revoked within `APIKeyStore.longestCacheSeconds`: another instance
        /// may take one until it hears of the revocation (`AccessChange`), and is answered
        /// nothing (revoking moves `version`, `APIKeyStore.revoke`).
        public var revokedKeys: Set<UUID>
        public var policy: PolicyStore.Versioned
        /// The tenant's credentials and every client's `permanent` ones; not session ones.
        public var credentials: CredentialIndex
        public var blockedUntil: [UUID: Date]
        /// How far the database's clock runs ahead of this instance's (negative: behind), as
        /// measured when the state was read. The database's clock set the blocks and the sessions'
        /// expiries, and `record_decisions` judges by it.
        public var databaseClockOffset: TimeInterval

        /// The database's time now, by this instance's clock and the offset measured.
        public var databaseNow: Date { Date().addingTimeInterval(databaseClockOffset) }
    }

    /// The tenant's flags and policy, without its credentials: what the routes that act on the
    /// policy alone read fresh (opening a session, a submission, a security check's report). A
    /// tenant's full state holds every credential it has, tens of thousands for a large fleet.
    public struct TenantSettings: Sendable {
        public var version: Int64
        public var disabled: Bool
        /// As in ``TenantState/revokedKeys``.
        public var revokedKeys: Set<UUID>
        public var policy: PolicyStore.Versioned
        /// As in ``TenantState/databaseClockOffset``.
        public var databaseClockOffset: TimeInterval

        public var databaseNow: Date { Date().addingTimeInterval(databaseClockOffset) }
    }

    /// A session, what it remembers, and its `forSession` credentials, at `version`.
    public struct SessionState: Sendable {
        public var session: Session
        public var version: Int64
        public var memory: [String: SessionMemoryEntry]
        public var credentials: [Credential]
    }

    public func tenantState(_ tenantID: UUID) async throws -> TenantState? {
        try await pool.withConnection { connection in try Self.tenantState(tenantID, on: connection) }
    }

    /// The tenant's state now, read from `earlier` and what changed since its version
    /// (migration 0027): the credentials written or removed since, not all of them. `earlier`
    /// must be younger than the day removals are kept (`CredentialStore.purgeRemovals`).
    public func tenantState(_ tenantID: UUID, after earlier: TenantState) async throws -> TenantState? {
        try await pool.withConnection { connection in try Self.tenantState(tenantID, after: earlier, on: connection) }
    }

    public func tenantSettings(_ tenantID: UUID) async throws -> TenantSettings? {
        try await pool.withConnection { connection in try Self.tenantSettings(tenantID, on: connection) }
    }

    public func sessionState(tenantID: UUID, sessionID: UUID) async throws -> SessionState? {
        try await pool.withConnection { connection in try Self.sessionState(tenantID: tenantID, sessionID: sessionID, on: connection) }
    }

    /// The tenant's and the session's state as they would be once a retry had counted the
    /// rejection of the release it names (`DecisionStore.lastRelease`), and the release it
    /// would reject: read in a transaction that is rolled back, so that what a retry would be
    /// answered is known (explain) with nothing counted. `nil`: no such tenant or session.
    public func statesAfterRetry(
        tenantID: UUID,
        sessionID: UUID,
        of retry: DecisionStore.Retry
    ) async throws -> (tenant: TenantState, session: SessionState, rejected: UUID?)? {
        try await pool.withConnection { connection in
            guard try !connection.query("SELECT 1 FROM sessions WHERE tenant_id = $1 AND id = $2", [.uuid(tenantID), .uuid(sessionID)]).rows.isEmpty else {
                return nil
            }
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            var rejected: UUID?
            if let earlier = try DecisionStore.lastRelease(sessionID: sessionID, retry: retry, on: connection), earlier.outcome == nil {
                do {
                    let result = try DecisionStore.recordOutcome(
                        tenantID: tenantID, decisionID: earlier.id, outcome: .rejected, upstreamStatus: retry.upstreamStatus, source: "retry",
                        acceptingSecurityChecks: false, on: connection
                    )
                    if result?.counted == true { rejected = earlier.id }
                } catch let error as CountersignError where error.code == .outcomeConflict {
                    // Reported otherwise meanwhile: the retry would count nothing.
                }
            }
            guard let tenant = try Self.tenantState(tenantID, on: connection),
                let session = try Self.sessionState(tenantID: tenantID, sessionID: sessionID, on: connection)
            else { return nil }
            return (tenant, session, rejected)
        }
    }

    static func tenantSettings(_ tenantID: UUID, on connection: PostgresConnection) throws -> TenantSettings? {
        let asked = Date()
        guard let tenant = try connection.query(
            "SELECT state_version, disabled_at IS NOT NULL AS disabled, now() AS database_now FROM tenants WHERE id = $1",
            [.uuid(tenantID)]
        ).rows.first else { return nil }
        // now() was read between the question and the answer: taken as read halfway.
        let readAt = asked.addingTimeInterval(Date().timeIntervalSince(asked) / 2)
        // Only keys an instance may still hold from before their revocation: the set stays as
        // small as the revocations of the last hour, however many keys a tenant revoked.
        let revokedKeys = try connection.query(
            "SELECT id FROM api_keys WHERE tenant_id = $1 AND revoked_at > now() - make_interval(secs => $2)",
            [.uuid(tenantID), .int(APIKeyStore.longestCacheSeconds)]
        ).rows.map { try $0.decode("id", as: UUID.self) }
        return TenantSettings(
            version: try tenant.decode("state_version"),
            disabled: try tenant.decode("disabled"),
            revokedKeys: Set(revokedKeys),
            policy: try PolicyStore.current(tenantID: tenantID, lock: false, on: connection) ?? .init(version: 0, policy: .empty),
            databaseClockOffset: try tenant.decode("database_now", as: Date.self).timeIntervalSince(readAt)
        )
    }

    static func tenantState(_ tenantID: UUID, on connection: PostgresConnection) throws -> TenantState? {
        guard let settings = try tenantSettings(tenantID, on: connection) else { return nil }
        let credentials = try connection.query(
            "SELECT \(Credential.columns) FROM credentials c WHERE c.tenant_id = $1 AND c.owner <> 'session'",
            [.uuid(tenantID)]
        ).rows.map(Credential.init(row:))
        return try tenantState(settings, credentials: CredentialIndex(credentials), tenantID: tenantID, on: connection)
    }

    static func tenantState(_ tenantID: UUID, after earlier: TenantState, on connection: PostgresConnection) throws -> TenantState? {
        guard let settings = try tenantSettings(tenantID, on: connection) else { return nil }
        // A version gone back (the database restored from a backup) leaves nothing to build on.
        guard settings.version >= earlier.version else { return try tenantState(tenantID, on: connection) }
        // Read after the version, as a whole load reads them: rows stamped after it only make
        // the state newer than its version (see the type's comment).
        var changed: [Credential] = []
        var removed: Set<UUID> = []
        for row in try connection.query(
            "SELECT \(Credential.columns) FROM credentials c WHERE c.tenant_id = $1 AND c.changed_version > $2",
            [.uuid(tenantID), .int(earlier.version)]
        ).rows {
            let credential = try Credential(row: row)
            // Handed to a session, it leaves the tenant's set as a removed one does.
            if case .session = credential.owner { removed.insert(credential.id) } else { changed.append(credential) }
        }
        for row in try connection.query(
            "SELECT credential_id FROM credential_removals WHERE tenant_id = $1 AND changed_version > $2",
            [.uuid(tenantID), .int(earlier.version)]
        ).rows {
            removed.insert(try row.decode("credential_id"))
        }
        let credentials = changed.isEmpty && removed.isEmpty ? earlier.credentials : earlier.credentials.updating(changed, removing: removed)
        return try tenantState(settings, credentials: credentials, tenantID: tenantID, on: connection)
    }

    private static func tenantState(_ settings: TenantSettings, credentials: CredentialIndex, tenantID: UUID, on connection: PostgresConnection) throws -> TenantState {
        var blocked: [UUID: Date] = [:]
        for row in try connection.query(
            "SELECT credential_id, max(blocked_until) AS until FROM rejection_counters WHERE tenant_id = $1 AND blocked_until > now() GROUP BY credential_id",
            [.uuid(tenantID)]
        ).rows {
            blocked[try row.decode("credential_id")] = try row.decode("until")
        }
        return TenantState(
            version: settings.version,
            disabled: settings.disabled,
            revokedKeys: settings.revokedKeys,
            policy: settings.policy,
            credentials: credentials,
            blockedUntil: blocked,
            databaseClockOffset: settings.databaseClockOffset
        )
    }

    // Remembered evaluations are written by DecisionWriter.encoder (RFC 3339 with milliseconds).
    private static let trustDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601withFractions
        return decoder
    }()

    static func sessionState(tenantID: UUID, sessionID: UUID, on connection: PostgresConnection) throws -> SessionState? {
        guard let row = try connection.query(
            "SELECT \(SessionStore.columns) FROM sessions s WHERE s.tenant_id = $1 AND s.id = $2",
            [.uuid(tenantID), .uuid(sessionID)]
        ).rows.first else { return nil }
        let session = try SessionStore.session(from: row)
        var memory: [String: SessionMemoryEntry] = [:]
        for entry in try connection.query(
            """
            SELECT space_key, disposition, credential_id, persistence, rule_id, rule_name, max_failures, blocked_disposition,
                trust_evaluation::text AS trust_evaluation, block_seconds, block_increment_seconds, max_block_seconds
            FROM session_memory WHERE session_id = $1
            """,
            [.uuid(sessionID)]
        ).rows {
            let blocked: String? = try entry.decode("blocked_disposition")
            let trust: String? = try entry.decode("trust_evaluation")
            let blockSeconds: Int? = try entry.decode("block_seconds")
            let blockIncrement: Int? = try entry.decode("block_increment_seconds")
            let maxBlockSeconds: Int? = try entry.decode("max_block_seconds")
            let remembered = SessionMemoryEntry(
                spaceKey: try entry.decode("space_key"),
                disposition: try entry.decodeEnum("disposition"),
                credentialID: try entry.decode("credential_id"),
                persistence: try entry.decodeEnum("persistence"),
                ruleID: try entry.decode("rule_id"),
                ruleName: try entry.decode("rule_name"),
                maxFailures: try entry.decode("max_failures"),
                blockSchedule: blockSeconds.map { seconds in
                    BlockSchedule(seconds: seconds, incrementSeconds: blockIncrement ?? 0, maximumSeconds: maxBlockSeconds ?? seconds)
                },
                blockedDisposition: blocked.flatMap(Disposition.init(rawValue:)),
                trust: try trust.map { try Self.trustDecoder.decode(ServerTrustVerdict.self, from: Data($0.utf8)) }
            )
            memory[remembered.spaceKey] = remembered
        }
        let credentials = try connection.query(
            "SELECT \(Credential.columns) FROM credentials c WHERE c.tenant_id = $1 AND c.owner = 'session' AND c.owner_session_id = $2",
            [.uuid(tenantID), .uuid(sessionID)]
        ).rows.map(Credential.init(row:))
        return SessionState(session: session, version: try row.decode("state_version"), memory: memory, credentials: credentials)
    }
}
