public import CountersignCore
public import CountersignCrypto
public import CountersignPostgres
public import Foundation

/// The tenant's client identities: credentials of kind `clientIdentity` whose sealed secret is
/// the PKCS#8 private key, with their certificates beside them in `client_identities`.
///
/// Listings and lookups return `Credential`s with `certificate` set and never the key; only
/// `identity(tenantID:id:secretVersion:)` opens it, for a decision that releases it.
public struct IdentityStore: Sendable {
    let pool: PostgresPool
    let vault: SecretVault

    public init(pool: PostgresPool, vault: SecretVault) {
        self.pool = pool
        self.vault = vault
    }

    /// The identities stored beside `credentials`, in the same database and under the same vault.
    public init(credentials: CredentialStore) {
        self.init(pool: credentials.pool, vault: credentials.vault)
    }

    /// The longest leaf subject (RFC 2253 text, ASCII) an identity is stored under: the subject
    /// is the account of the identity's credential row, as long as a password's account may be.
    public static let maximumSubjectLength = 1000

    /// Stores `identity` for the tenant. The same certificate twice is `identity_exists`; a leaf
    /// subject longer than `maximumSubjectLength` is `invalid_identity`.
    public func create(tenantID: UUID, identity: ClientIdentity, label: String?, actor: String) async throws -> Credential {
        guard identity.certificate.subject.utf8.count <= Self.maximumSubjectLength else {
            throw CountersignError(
                .invalidIdentity,
                "the certificate's subject is longer than \(Self.maximumSubjectLength) characters, too long to store the identity under"
            )
        }
        let key = try await vault.key(for: tenantID)
        let id = UUID.random()
        var pkcs8: [UInt8]
        do {
            pkcs8 = try identity.privateKey.pkcs8DER
        } catch {
            throw CountersignError(.internalError, "the private key could not be encoded for storage")
        }
        let sealed = try key.seal(pkcs8, rowID: id)
        // The plaintext key is not needed any more; do not leave it in freed memory.
        pkcs8.wipe()

        let leaf = identity.certificate
        let names = AcceptableIssuers.names(certificate: leaf, chain: identity.chain).map { Data($0).base64EncodedString() }
        let chainSubjects = identity.chain.map(\.subject)
        do {
            return try await pool.withTransaction { connection in
                try connection.execute(
                    """
                    INSERT INTO credentials (id, tenant_id, kind, owner, host, authentication_method, is_proxy, account, path, label,
                        sealed_secret)
                    VALUES ($1, $2, 'clientIdentity', 'tenant', '*', $3, false, $4, $5, $6, $7)
                    """,
                    [
                        .uuid(id), .uuid(tenantID), .text(AuthenticationMethod.clientCertificate.rawValue), .text(leaf.subject),
                        .text(leaf.sha256Fingerprint), PostgresValue(label), .bytea(sealed),
                    ]
                )
                try connection.execute(
                    """
                    INSERT INTO client_identities (credential_id, tenant_id, subject, issuer, serial_number, not_before, not_after,
                        sha256_fingerprint, key_algorithm, certificate_chain, chain_subjects, issuer_names)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12::jsonb)
                    """,
                    [
                        .uuid(id), .uuid(tenantID), .text(leaf.subject), .text(leaf.issuer), .text(leaf.serialNumberHex),
                        .timestamp(leaf.notBefore), .timestamp(leaf.notAfter), .text(leaf.sha256Fingerprint),
                        .text(identity.privateKey.algorithm.description), .text(identity.certificateChainPEM),
                        .json(try Self.json(chainSubjects)), .json(try Self.json(names)),
                    ]
                )
                try CredentialHistory.record(
                    "created",
                    credentialID: id,
                    tenantID: tenantID,
                    actor: actor,
                    details: ["sha256Fingerprint": leaf.sha256Fingerprint],
                    on: connection
                )
                try TenantStateVersion.bump(tenantID, on: connection)
                guard let created = try Self.select(tenantID: tenantID, id: id, on: connection) else {
                    throw CountersignError(.internalError, "the stored identity vanished")
                }
                return created
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            let existing = try await pool.withConnection { connection in
                try connection.query(
                    """
                    SELECT c.id FROM credentials c JOIN client_identities i ON i.credential_id = c.id
                    WHERE c.tenant_id = $1 AND i.sha256_fingerprint = $2
                    """,
                    [.uuid(tenantID), .text(leaf.sha256Fingerprint)]
                ).rows.first?.decode("id", as: UUID.self)
            }
            throw CountersignError(
                .identityExists,
                "this certificate is already identity \(existing?.text ?? "of this tenant"); delete it first to replace it"
            )
        }
    }

    /// One page of the tenant's identities, those valid longest first, and the cursor of the next page.
    public func list(tenantID: UUID, limit: Int = 100, after cursor: String? = nil) async throws -> (entries: [Credential], next: String?) {
        let list = PageCursor.list("identities", tenantID: tenantID, filters: [])
        return try await PageCursor.paging(list, after: cursor) { position in
            try await pool.withConnection { connection in
                let rows = try connection.query(
                    """
                    SELECT \(Credential.columns), i.not_after::text AS cursor_at FROM credentials c JOIN client_identities i ON i.credential_id = c.id
                    WHERE c.tenant_id = $1 AND c.kind = 'clientIdentity'
                      AND ($2::timestamptz IS NULL OR (i.not_after, c.id) < ($2::timestamptz, $3::uuid))
                    ORDER BY i.not_after DESC, c.id DESC
                    LIMIT $4
                    """,
                    [.uuid(tenantID), PostgresValue(position?.at), PostgresValue(position?.id), .int(limit + 1)]
                ).rows
                return try PageCursor.page(list, of: rows, limit: limit, Credential.init(row:))
            }
        }
    }

    public func get(tenantID: UUID, id: UUID) async throws -> Credential? {
        try await pool.withConnection { connection in
            try Self.select(tenantID: tenantID, id: id, on: connection)
        }
    }

    /// Deletes an identity with its counters and what sessions remember of it (no foreign key
    /// cascades them; see `CredentialStore.deleteDependents`); refused
    /// (`identity_in_use`) while a policy rule names it. False when there is no such identity.
    public func delete(tenantID: UUID, id: UUID, actor: String) async throws -> Bool {
        try await pool.withTransaction { connection in
            try CredentialStore.lockSessionsHolding(tenantID: tenantID, credentialID: id, on: connection)
            guard try connection.query(
                "SELECT 1 FROM credentials WHERE tenant_id = $1 AND id = $2 AND kind = 'clientIdentity' FOR UPDATE",
                [.uuid(tenantID), .uuid(id)]
            ).count > 0 else { return false }
            if let policy = try PolicyStore.current(tenantID: tenantID, lock: true, on: connection),
                let rule = policy.policy.rules.first(where: { $0.then.identityId?.lowercased() == id.text })
            {
                throw CountersignError(.identityInUse, "policy rule '\(rule.id)' names this identity; change the policy first")
            }
            try CredentialStore.deleteDependents(of: [id], on: connection)
            try connection.execute("DELETE FROM credentials WHERE tenant_id = $1 AND id = $2", [.uuid(tenantID), .uuid(id)])
            try CredentialHistory.record("deleted", credentialID: id, tenantID: tenantID, actor: actor, on: connection)
            try TenantStateVersion.bump(tenantID, on: connection)
            return true
        }
    }

    /// The identity with its private key opened; `nil` when it is gone or its secret changed
    /// since `secretVersion`.
    public func identity(tenantID: UUID, id: UUID, secretVersion: Int) async throws -> ClientIdentity? {
        let key = try await vault.key(for: tenantID)
        let stored = try await pool.withConnection { connection -> (sealed: [UInt8], chain: String)? in
            guard let row = try connection.query(
                """
                SELECT c.sealed_secret, i.certificate_chain FROM credentials c JOIN client_identities i ON i.credential_id = c.id
                WHERE c.tenant_id = $1 AND c.id = $2 AND c.secret_version = $3 AND c.kind = 'clientIdentity'
                """,
                [.uuid(tenantID), .uuid(id), .int(secretVersion)]
            ).rows.first else { return nil }
            return (try row.decode("sealed_secret"), try row.decode("certificate_chain"))
        }
        guard let stored else { return nil }
        var pkcs8 = try key.open(stored.sealed, rowID: id)
        defer { pkcs8.wipe() }
        do {
            let privateKey = try PrivateKey(pkcs8DER: pkcs8)
            let certificates = try Certificate.parseChain(pem: stored.chain)
            // Checked when it was uploaded (identities stored before chain links were checked included).
            return try ClientIdentity(privateKey: privateKey, certificate: certificates[0], chain: Array(certificates.dropFirst()), checkingLinks: false)
        } catch {
            throw CountersignError(.secretUnreadable, "a stored client identity cannot be read (\(error.code.rawValue))")
        }
    }

    static func select(tenantID: UUID, id: UUID, on connection: PostgresConnection) throws -> Credential? {
        try connection.query(
            "SELECT \(Credential.columns) FROM credentials c WHERE c.tenant_id = $1 AND c.id = $2 AND c.kind = 'clientIdentity'",
            [.uuid(tenantID), .uuid(id)]
        ).rows.first.map(Credential.init(row:))
    }

    private static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }
}
