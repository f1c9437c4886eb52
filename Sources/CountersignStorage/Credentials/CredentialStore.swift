public import CountersignCore
public import CountersignPostgres
public import Foundation

/// The credential store: admin-provisioned and client-submitted password credentials, their
/// sealed secrets and their history. Client identities share the table (kind
/// `clientIdentity`) but are managed by `IdentityStore`; nothing here reads or changes them.
public struct CredentialStore: Sendable {
    let pool: PostgresPool
    let vault: SecretVault

    public init(pool: PostgresPool, vault: SecretVault) {
        self.pool = pool
        self.vault = vault
    }

    /// Deletes the records of credentials removed more than `seconds` ago (migration 0027), some
    /// thousands at a time; returns how many went.
    public func purgeRemovals(olderThan seconds: Int, limit: Int = 5000) async throws -> Int {
        try await pool.withConnection { connection in
            try connection.execute(
                """
                DELETE FROM credential_removals WHERE ctid IN (
                    SELECT ctid FROM credential_removals WHERE removed_at < now() - make_interval(secs => $1) LIMIT $2)
                """,
                [.int(Int64(seconds)), .int(Int64(limit))]
            )
        }
    }

    /// A credential to save: where it applies, whose it is, and its secret.
    public struct Input: Sendable {
        public var attributes: CredentialAttributes
        public var domain: String?
        public var label: String?
        public var password: String
        public var owner: CredentialOwner
        /// `Credential.exportable`; `nil`: as it is, or exportable for a new credential.
        public var exportable: Bool?

        public init(attributes: CredentialAttributes, domain: String?, label: String?, password: String, owner: CredentialOwner, exportable: Bool? = nil) {
            self.attributes = attributes
            self.domain = domain
            self.label = label
            self.password = password
            self.owner = owner
            self.exportable = exportable
        }
    }

    /// Changes to a credential; `nil` leaves a field as it is.
    public struct Changes: Sendable {
        /// Turns the attributes the credential has, read under its row lock, into the new ones (and
        /// throws for a result that is not valid). An edit, not the new attributes: attributes
        /// read before the lock would put back what a concurrent update changed meanwhile.
        public var attributes: (@Sendable (CredentialAttributes) throws -> CredentialAttributes)?
        public var domain: String??
        public var label: String??
        public var password: String?
        public var exportable: Bool?

        public init(
            attributes: (@Sendable (CredentialAttributes) throws -> CredentialAttributes)? = nil,
            domain: String?? = nil,
            label: String?? = nil,
            password: String? = nil,
            exportable: Bool? = nil
        ) {
            self.attributes = attributes
            self.domain = domain
            self.label = label
            self.password = password
            self.exportable = exportable
        }
    }

    /// A history entry of a credential.
    public struct HistoryEntry: Sendable, Codable {
        public var at: Date
        public var event: String
        public var actor: String
        public var details: [String: String]
    }

    /// Saves a credential: a new one, or, when one with the same keychain key and owner
    /// exists, that one updated in place (same id, history and counters; a changed secret
    /// resets its counters and unblocks it). Returns the credential and whether it is new.
    public func save(tenantID: UUID, _ input: Input, actor: String) async throws -> (credential: Credential, created: Bool) {
        try await save(tenantID: tenantID, input, actor: actor, submittedIn: nil)
    }

    /// Saves a credential a client submitted for `space` with `persistence`: `forSession`
    /// credentials belong to the session, which remembers them for the space; `permanent` ones
    /// to the client; `synchronizable` ones to the tenant. `none` must not come here. Whatever the
    /// persistence, the session must still be live when the credential is saved (an instance's
    /// view of it may be older than an invalidation through another).
    public func submit(
        tenantID: UUID,
        session: Session,
        space: ProtectionSpace,
        user: String,
        password: String,
        domain: String?,
        persistence: Persistence
    ) async throws -> (credential: Credential, created: Bool) {
        let owner: CredentialOwner
        switch persistence {
        case .none: preconditionFailure("credentials submitted with persistence none are not stored")
        case .forSession: owner = .session(session.id, clientID: session.clientId)
        case .permanent: owner = .client(session.clientId)
        case .synchronizable: owner = .tenant(submittedBy: session.clientId)
        }
        let input = Input(attributes: CredentialAttributes(space: space, account: user), domain: domain, label: nil, password: password, owner: owner)
        return try await save(
            tenantID: tenantID,
            input,
            actor: "client:\(session.clientId)",
            submittedIn: (session.id, rememberedFor: persistence == .forSession ? space.key : nil)
        )
    }

    private func save(
        tenantID: UUID,
        _ input: Input,
        actor: String,
        submittedIn session: (id: UUID, rememberedFor: String?)?
    ) async throws -> (credential: Credential, created: Bool) {
        let key = try await vault.key(for: tenantID)
        let attributes = input.attributes.normalized
        do {
            return try await pool.withTransaction { connection in
                if let session {
                    // Sessions are locked before anything else, as everywhere (see DecisionWriter).
                    let active = try connection.query(
                        "SELECT invalidated_at IS NULL AND expires_at > now() AS active FROM sessions WHERE id = $1 FOR NO KEY UPDATE",
                        [.uuid(session.id)]
                    ).rows.first?.decode("active", as: Bool.self)
                    guard active == true else { throw CountersignError(.sessionInvalidated, "the session is invalidated") }
                }
                let saved: (credential: Credential, created: Bool)
                let hosts = CredentialAttributes.storedForms(ofHostAsSent: input.attributes.host)
                if let existing = try Self.find(tenantID: tenantID, attributes: attributes, hosts: hosts, owner: input.owner, on: connection) {
                    // Metadata left out stays (a vault sync that sends the password alone must not
                    // drop an NTLM domain); PATCH clears it with null.
                    let changes = Changes(
                        domain: input.domain.map { .some($0) }, label: input.label.map { .some($0) }, password: input.password, exportable: input.exportable
                    )
                    saved = (try Self.apply(changes, to: existing, key: key, actor: actor, on: connection), false)
                } else {
                    saved = (try Self.insert(tenantID: tenantID, input, attributes: attributes, key: key, actor: actor, on: connection), true)
                }
                if let session, let spaceKey = session.rememberedFor {
                    try Self.remember(saved.credential.id, spaceKey: spaceKey, sessionID: session.id, on: connection)
                }
                return saved
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            // Saved concurrently by someone else: now it exists, so this save updates it.
            return try await save(tenantID: tenantID, input, actor: actor, submittedIn: session)
        }
    }

    private static func insert(
        tenantID: UUID,
        _ input: Input,
        attributes: CredentialAttributes,
        key: TenantSecretKey,
        actor: String,
        on connection: PostgresConnection
    ) throws -> Credential {
        let id = UUID.random()
        let sealed = try CredentialSecret(password: input.password).sealed(with: key, rowID: id, exportable: input.exportable ?? true)
        let rows = try connection.query(
            """
            INSERT INTO credentials AS c (id, tenant_id, kind, owner, owner_client_id, owner_session_id, submitted_by_client,
                host, port, protocol, realm, path, authentication_method, is_proxy, account, domain, label, sealed_secret, exportable)
            VALUES ($1, $2, 'password', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
            RETURNING \(Credential.columns)
            """,
            [.uuid(id), .uuid(tenantID)] + input.owner.columnValues + Self.attributeValues(attributes)
                + [PostgresValue(input.domain), PostgresValue(input.label), .bytea(sealed), .bool(input.exportable ?? true)]
        )
        let credential = try Credential(row: rows.rows[0])
        // No bump here: the insert trigger (migration 0027) bumps the tenant's version for a
        // credential of its set, and a session's own is not in it (its session's version moves).
        try CredentialHistory.record("created", credentialID: id, tenantID: tenantID, actor: actor, on: connection)
        return credential
    }

    /// The session serves this credential for the space from now on, without the policy.
    private static func remember(_ credentialID: UUID, spaceKey: String, sessionID: UUID, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO session_memory (session_id, space_key, disposition, credential_id, persistence)
            VALUES ($1, $2, 'useCredential', $3, 'forSession')
            ON CONFLICT (session_id, space_key) DO UPDATE SET disposition = 'useCredential', credential_id = excluded.credential_id,
                persistence = 'forSession', rule_id = NULL, rule_name = NULL, max_failures = NULL, blocked_disposition = NULL,
                block_seconds = NULL, block_increment_seconds = NULL, max_block_seconds = NULL, created_at = now()
            """,
            [.uuid(sessionID), .text(spaceKey), .uuid(credentialID)]
        )
        try connection.execute("UPDATE sessions SET state_version = state_version + 1 WHERE id = $1", [.uuid(sessionID)])
    }

    /// Updates one of the tenant's credentials by id (an admin's, or one a client submitted);
    /// `nil` when the tenant has no such credential.
    public func update(tenantID: UUID, id: UUID, _ changes: Changes, actor: String) async throws -> Credential? {
        let key = try await vault.key(for: tenantID)
        do {
            return try await pool.withTransaction { connection in
                try Self.lockOwningSession(tenantID: tenantID, credentialID: id, on: connection)
                guard let existing = try Self.lock(tenantID: tenantID, id: id, on: connection) else { return nil }
                return try Self.apply(changes, to: existing, key: key, actor: actor, on: connection)
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            throw CountersignError(.credentialConflict, "another credential of this owner already has these attributes")
        }
    }

    /// One page of the tenant's password credentials, newest first, and the cursor of the next
    /// page. `host` is folded as saved hosts are (`ProtectionSpace.foldedHost`), and also finds rows
    /// an earlier release saved it unfolded in (`CredentialAttributes.storedForms`).
    public func list(
        tenantID: UUID,
        host: String? = nil,
        account: String? = nil,
        limit: Int = 100,
        after cursor: String? = nil
    ) async throws -> (entries: [Credential], next: String?) {
        let list = PageCursor.list("credentials", tenantID: tenantID, filters: [host, account])
        return try await PageCursor.paging(list, after: cursor) { position in
            try await pool.withConnection { connection in
                let rows = try connection.query(
                    """
                    SELECT \(Credential.columns), c.created_at::text AS cursor_at FROM credentials c
                    WHERE c.tenant_id = $1 AND c.kind = 'password' AND \(Self.ownerLive) AND ($2::text[] IS NULL OR c.host = ANY($2::text[])) AND ($3::text IS NULL OR c.account = $3)
                      AND ($4::timestamptz IS NULL OR (c.created_at, c.id) < ($4::timestamptz, $5::uuid))
                    ORDER BY c.created_at DESC, c.id DESC
                    LIMIT $6
                    """,
                    [.uuid(tenantID), host.map { .textArray(CredentialAttributes.storedForms(ofHostAsSent: $0)) } ?? .null, PostgresValue(account), PostgresValue(position?.at), PostgresValue(position?.id), .int(limit + 1)]
                ).rows
                return try PageCursor.page(list, of: rows, limit: limit, Credential.init(row:))
            }
        }
    }

    public func get(tenantID: UUID, id: UUID) async throws -> Credential? {
        try await pool.withConnection { connection in
            try connection.query(
                "SELECT \(Credential.columns) FROM credentials c WHERE c.tenant_id = $1 AND c.id = $2 AND c.kind = 'password' AND \(Self.ownerLive)",
                [.uuid(tenantID), .uuid(id)]
            ).rows.first.map(Credential.init(row:))
        }
    }

    /// A session's credential is gone when its session ends, even before the sweep that deletes
    /// it (`SessionStore`) has run: an expired session's are not shown.
    static let ownerLive = """
        (c.owner_session_id IS NULL OR EXISTS (SELECT 1 FROM sessions s
            WHERE s.id = c.owner_session_id AND s.invalidated_at IS NULL AND s.expires_at > now()))
        """

    /// Deletes a credential with its counters; refused while a policy rule names it.
    /// Returns false when the tenant has no such credential.
    public func delete(tenantID: UUID, id: UUID, actor: String) async throws -> Bool {
        try await pool.withTransaction { connection in
            try Self.lockSessionsHolding(tenantID: tenantID, credentialID: id, on: connection)
            guard let existing = try Self.lock(tenantID: tenantID, id: id, on: connection) else { return false }
            // Read without a lock: the credential's own row lock already orders this deletion
            // with a policy save naming it (`PolicyStore.replace` takes the credentials a rule may
            // name first). A share lock on the policy row, taken before the tenant row bumped
            // below, deadlocked with a save that holds the tenant and then writes that row.
            if let policy = try PolicyStore.current(tenantID: tenantID, lock: false, on: connection) {
                if let rule = policy.policy.rules.first(where: { $0.then.credentialId?.lowercased() == id.text }) {
                    throw CountersignError(.credentialInUse, "policy rule '\(rule.id)' names this credential; change the policy first")
                }
                if let handler = policy.policy.securityChecks.first(where: { $0.credentialId?.lowercased() == id.text }) {
                    throw CountersignError(.credentialInUse, "the handler of security check '\(handler.securityCheck)' names this credential; change the policy first")
                }
            }
            try Self.deleteDependents(of: [id], on: connection)
            try connection.execute("DELETE FROM credentials WHERE tenant_id = $1 AND id = $2", [.uuid(tenantID), .uuid(id)])
            try CredentialHistory.record("deleted", credentialID: id, tenantID: tenantID, actor: actor, on: connection)
            try TenantStateVersion.bump(tenantID, on: connection)
            try Self.moveOwningSession(of: existing, on: connection)
            return true
        }
    }

    /// One page of a credential's history, oldest first, and the cursor of the next page; `nil`
    /// when the tenant never had that credential. A deleted credential keeps its history.
    public func history(tenantID: UUID, id: UUID, limit: Int = 100, after cursor: String? = nil) async throws -> (entries: [HistoryEntry], next: String?)? {
        // Named by the tenant and the credential: another history's cursor is refused.
        let list = PageCursor.list("credential-history", tenantID: tenantID, filters: [id.text])
        let after = try cursor.map { text in
            let values = try KeyCursor(text: text, count: 2).values
            guard values[0] == list, let sequence = Int64(values[1]) else { throw PageCursor.refused }
            return sequence
        }
        return try await pool.withConnection { connection in
            let rows = try connection.query(
                """
                SELECT id, at, event, actor, details::text AS details FROM credential_history
                WHERE tenant_id = $1 AND credential_id = $2 AND ($3::bigint IS NULL OR id > $3::bigint)
                ORDER BY id
                LIMIT $4
                """,
                [.uuid(tenantID), .uuid(id), PostgresValue(after), .int(limit + 1)]
            ).rows
            if rows.isEmpty {
                let known = try connection.query(
                    "SELECT 1 FROM credential_history WHERE tenant_id = $1 AND credential_id = $2 LIMIT 1",
                    [.uuid(tenantID), .uuid(id)]
                )
                guard !known.rows.isEmpty else { return nil }
            }
            let shown = rows.prefix(limit)
            let next = try rows.count > limit ? shown.last.map { KeyCursor(values: [list, String(try $0.decode("id", as: Int64.self))]).text } : nil
            return (try shown.map(Self.historyEntry(from:)), next)
        }
    }

    private static func historyEntry(from row: PostgresRow) throws -> HistoryEntry {
        let details: String = try row.decode("details")
        return HistoryEntry(
            at: try row.decode("at"),
            event: try row.decode("event"),
            actor: try row.decode("actor"),
            details: (try? JSONDecoder().decode([String: String].self, from: Data(details.utf8))) ?? [:]
        )
    }

    /// The password of a credential, opened; `nil` when it is gone or its secret changed
    /// since `secretVersion`.
    public func password(tenantID: UUID, id: UUID, secretVersion: Int) async throws -> String? {
        let key = try await vault.key(for: tenantID)
        let stored = try await pool.withConnection { connection in
            try connection.query(
                "SELECT sealed_secret, exportable FROM credentials WHERE tenant_id = $1 AND id = $2 AND secret_version = $3 AND kind = 'password'",
                [.uuid(tenantID), .uuid(id), .int(secretVersion)]
            ).rows.first.map { row in (sealed: try row.decode("sealed_secret", as: [UInt8].self), exportable: try row.decode("exportable", as: Bool.self)) }
        }
        return try stored.map { try CredentialSecret.opened($0.sealed, with: key, rowID: id, exportable: $0.exportable).password }
    }

    // MARK: - Helpers shared by the operations above

    /// Counters and session memory of deleted credentials: no foreign key cascades them (see
    /// migrations/0002_decisions.sql), so whoever deletes credentials deletes these first.
    static func deleteDependents(of credentialIDs: [UUID], on connection: PostgresConnection) throws {
        guard !credentialIDs.isEmpty else { return }
        let ids = PostgresValue.textArray(credentialIDs.map { $0.text })
        try connection.execute("DELETE FROM session_memory WHERE credential_id = ANY($1::uuid[])", [ids])
        try connection.execute(
            "DELETE FROM rejection_counter_clients WHERE counter_id IN (SELECT id FROM rejection_counters WHERE credential_id = ANY($1::uuid[]))",
            [ids]
        )
        try connection.execute("DELETE FROM rejection_counters WHERE credential_id = ANY($1::uuid[])", [ids])
    }

    static func attributeValues(_ attributes: CredentialAttributes) -> [PostgresValue] {
        [
            .text(attributes.host), PostgresValue(attributes.port), PostgresValue(attributes.protocolName), PostgresValue(attributes.realm),
            PostgresValue(attributes.path), PostgresValue(attributes.authenticationMethod?.rawValue), .bool(attributes.isProxy),
            .text(attributes.account),
        ]
    }

    /// The credential saved under these keychain attributes for `owner`, locked. Tenant-wide
    /// credentials an admin provisioned and ones clients submitted are apart
    /// (migrations/0008_submitted_credentials_apart.sql). The digests are compared as well as the
    /// texts because the keychain key holds those (migrations/0015): one index lookup. A row
    /// holding the host or port as an earlier release saved them is the same keychain key
    /// (`hosts`, from `CredentialAttributes.storedForms(ofHostAsSent:)`, and `storedDefaultPort`).
    static func find(
        tenantID: UUID,
        attributes: CredentialAttributes,
        hosts: [String],
        owner: CredentialOwner,
        on connection: PostgresConnection
    ) throws -> Credential? {
        let ownerValues = owner.columnValues
        return try connection.query(
            """
            SELECT \(Credential.columns) FROM credentials c
            WHERE c.tenant_id = $1 AND c.kind = 'password' AND c.owner = $2 AND coalesce(c.owner_client_id, '') = coalesce($3::text, '')
              AND coalesce(c.owner_session_id::text, '') = coalesce($4::uuid::text, '') AND c.is_proxy = $5 AND c.host = ANY($6::text[])
              AND (coalesce(c.port, -1) = coalesce($7::int, -1) OR c.port = $14::int) AND coalesce(c.protocol, '') = coalesce($8::text, '')
              AND coalesce(c.realm, '') = coalesce($9::text, '') AND coalesce(c.path, '') = coalesce($10::text, '')
              AND coalesce(c.authentication_method, '') = coalesce($11::text, '') AND c.account = $12
              AND text_sha256(coalesce(c.realm, '')) = text_sha256(coalesce($9::text, ''))
              AND text_sha256(coalesce(c.path, '')) = text_sha256(coalesce($10::text, '')) AND text_sha256(c.account) = text_sha256($12)
              AND (c.submitted_by_client IS NULL) = ($13::text IS NULL)
            -- A row saved folded before one saved as sent (`hosts`, `storedDefaultPort`).
            ORDER BY array_position($6::text[], c.host), c.port IS NOT DISTINCT FROM $14::int
            LIMIT 1
            FOR UPDATE
            """,
            [
                .uuid(tenantID), ownerValues[0], ownerValues[1], ownerValues[2], .bool(attributes.isProxy), .textArray(hosts),
                PostgresValue(attributes.port), PostgresValue(attributes.protocolName), PostgresValue(attributes.realm),
                PostgresValue(attributes.path), PostgresValue(attributes.authenticationMethod?.rawValue), .text(attributes.account),
                ownerValues[3], PostgresValue(attributes.storedDefaultPort),
            ]
        ).rows.first.map(Credential.init(row:))
    }

    /// Locks the session a session's credential belongs to, before the credential itself (lock
    /// order: sessions, decisions, credentials, counters, tenants), for `moveOwningSession`.
    private static func lockOwningSession(tenantID: UUID, credentialID: UUID, on connection: PostgresConnection) throws {
        try connection.execute(
            "SELECT 1 FROM sessions WHERE id = (SELECT owner_session_id FROM credentials WHERE tenant_id = $1 AND id = $2) FOR NO KEY UPDATE",
            [.uuid(tenantID), .uuid(credentialID)]
        )
    }

    /// Locks, before the credential, the session that owns it and every session that remembers
    /// it, whose memory its deletion deletes: sessions come first in the lock order, and the
    /// decision recorder, which holds a session and then the tenant while it adds to that
    /// session's memory, would otherwise deadlock with a deletion holding the memory row and
    /// waiting for the tenant. Only the tenant's own sessions: an admin naming another tenant's
    /// credential is answered 404 without holding that tenant's sessions meanwhile.
    static func lockSessionsHolding(tenantID: UUID, credentialID: UUID, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            SELECT 1 FROM sessions WHERE tenant_id = $1 AND id IN (
                SELECT owner_session_id FROM credentials WHERE tenant_id = $1 AND id = $2
                UNION SELECT session_id FROM session_memory WHERE credential_id = $2)
            ORDER BY id FOR NO KEY UPDATE
            """,
            [.uuid(tenantID), .uuid(credentialID)]
        )
    }

    /// Moves the state version of the session `credential` belongs to, if a session owns it, once
    /// the credential changed. A session keeps its own credentials in the decision state every
    /// instance caches, and a decision is checked against the session's version as against the
    /// tenant's: moving only the tenant's would let the instance that made the change, having
    /// reloaded the tenant alone, release the credential as the session last cached it, deleted
    /// or with its old secret. The caller locked the session first (`lockOwningSession`).
    private static func moveOwningSession(of credential: Credential, on connection: PostgresConnection) throws {
        guard case .session(let sessionID, _) = credential.owner else { return }
        try connection.execute("UPDATE sessions SET state_version = state_version + 1 WHERE id = $1", [.uuid(sessionID)])
    }

    static func lock(tenantID: UUID, id: UUID, on connection: PostgresConnection) throws -> Credential? {
        try connection.query(
            "SELECT \(Credential.columns) FROM credentials c WHERE c.tenant_id = $1 AND c.id = $2 AND c.kind = 'password' AND \(Self.ownerLive) FOR UPDATE OF c",
            [.uuid(tenantID), .uuid(id)]
        ).rows.first.map(Credential.init(row:))
    }

    /// Applies `changes` to a locked credential in the caller's transaction.
    static func apply(_ changes: Changes, to existing: Credential, key: TenantSecretKey, actor: String, on connection: PostgresConnection) throws -> Credential {
        let tenantID = existing.tenantID
        let exportable = changes.exportable ?? existing.exportable
        var secretChanged = false
        var sealed: [UInt8]?
        if changes.password != nil || exportable != existing.exportable {
            let current = try connection.query("SELECT sealed_secret FROM credentials WHERE id = $1", [.uuid(existing.id)])
            // A stored secret that does not open (sealed for another row, tenant or master key)
            // counts as different: setting the secret again is how an admin repairs it.
            let stored = try? CredentialSecret.opened(
                try current.rows[0].decode("sealed_secret"), with: key, rowID: existing.id, exportable: existing.exportable
            )
            if let password = changes.password, stored?.password != password {
                secretChanged = true
                sealed = try CredentialSecret(password: password).sealed(with: key, rowID: existing.id, exportable: exportable)
            } else if exportable != existing.exportable {
                // The flag is sealed with the secret (`TenantSecretKey.seal`): the same secret,
                // sealed again under the new one.
                guard let stored else {
                    throw CountersignError(.secretUnreadable, "the stored secret does not open: set the password again with this change")
                }
                sealed = try stored.sealed(with: key, rowID: existing.id, exportable: exportable)
            }
        }
        let attributes = try (changes.attributes?(existing.attributes) ?? existing.attributes).normalized
        let domain = changes.domain ?? existing.domain
        let label = changes.label ?? existing.label
        var details: [String: String] = [:]
        if attributes != existing.attributes.normalized { details["attributes"] = "changed" }
        if domain != existing.domain { details["domain"] = "changed" }
        if label != existing.label { details["label"] = "changed" }
        if exportable != existing.exportable { details["exportable"] = String(exportable) }
        // Nothing to change, nothing to record: a sync saving the same credential again leaves
        // no trace, and no cached decision state goes stale for it.
        guard secretChanged || !details.isEmpty else { return existing }
        let rows = try connection.query(
            """
            UPDATE credentials AS c SET host = $3, port = $4, protocol = $5, realm = $6, path = $7, authentication_method = $8,
                is_proxy = $9, account = $10, domain = $11, label = $12, exportable = $14,
                sealed_secret = coalesce($13, sealed_secret),
                secret_version = secret_version + CASE WHEN $15 THEN 1 ELSE 0 END,
                updated_at = now()
            WHERE c.tenant_id = $1 AND c.id = $2
            RETURNING \(Credential.columns)
            """,
            [.uuid(tenantID), .uuid(existing.id)] + attributeValues(attributes)
                + [PostgresValue(domain), PostgresValue(label), sealed.map(PostgresValue.bytea) ?? .null, .bool(exportable), .bool(secretChanged)]
        )
        let updated = try Credential(row: rows.rows[0])
        if secretChanged {
            details["secret"] = "changed"
            let unblocked = try connection.execute(
                """
                UPDATE rejection_counters SET failures = 0, blocked_until = NULL, repeated_blocks = 0, updated_at = now()
                WHERE credential_id = $1 AND (failures > 0 OR blocked_until IS NOT NULL OR repeated_blocks > 0)
                """,
                [.uuid(existing.id)]
            )
            if unblocked > 0 { details["counters"] = "reset" }
        }
        try CredentialHistory.record(secretChanged ? "secret_changed" : "updated", credentialID: existing.id, tenantID: tenantID, actor: actor, details: details, on: connection)
        try TenantStateVersion.bump(tenantID, on: connection)
        try moveOwningSession(of: existing, on: connection)
        if secretChanged {
            // Decisions made from an earlier state version released the earlier secret; their
            // rejections are not this secret's (DecisionStore.recordOutcome, migration 0012).
            try connection.execute(
                "UPDATE credentials SET secret_tenant_version = (SELECT state_version FROM tenants WHERE id = $1) WHERE id = $2",
                [.uuid(tenantID), .uuid(existing.id)]
            )
        }
        return updated
    }
}
