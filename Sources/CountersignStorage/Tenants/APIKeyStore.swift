public import CountersignCore
import CountersignCrypto
public import CountersignPostgres
public import Foundation

/// Tenant API keys: created and shown once, listed without their secret, revoked, and
/// checked on every request.
public struct APIKeyStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Who created a key, for the record.
    public enum Creator: Sendable {
        case `operator`
        case key(UUID)

        var recorded: String {
            switch self {
            case .operator: "operator"
            case .key(let id): id.text
            }
        }
    }

    /// A key just created: its metadata and the one time its whole text is available.
    public struct Created: Sendable {
        public var key: APIKey
        public var token: APIKeyToken
    }

    /// A key that authenticated, with what the request needs to know about its tenant.
    public struct Authenticated: Sendable {
        public var key: APIKey
        public var tenantDisabled: Bool
        public var secretHash: [UInt8]
    }

    /// Creates a key for an existing tenant; `nil` when the tenant does not exist.
    /// `clientID` binds a client key to one client (`APIKey.clientID`).
    public func create(tenantID: UUID, name: String, role: APIKeyRole, clientID: String? = nil, createdBy: Creator) async throws -> Created? {
        let id = UUID.random()
        let token = APIKeyToken(lookupBytes: try SecureRandom.bytes(APIKeyToken.lookupIDLength), secret: try SecureRandom.token(byteCount: 32))
        let hash = Self.hash(of: token)
        do {
            return try await pool.withConnection { connection in
                let rows = try connection.query(
                    """
                    INSERT INTO api_keys AS k (id, tenant_id, lookup_id, secret_hash, role, name, created_by, client_id)
                    SELECT $1, t.id, $3, $4, $5, $6, $7, $8 FROM tenants t WHERE t.id = $2
                    RETURNING \(Self.columns)
                    """,
                    [
                        .uuid(id), .uuid(tenantID), .text(Self.storedLookupID(token.lookupID, bound: clientID != nil)), .bytea(hash),
                        .text(role.rawValue), .text(name), .text(createdBy.recorded),
                        PostgresValue(clientID),
                    ]
                )
                return try rows.rows.first.map { Created(key: try Self.key(from: $0), token: token) }
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            // Two keys drew the same 60-bit lookup id: draw again rather than fail the admin.
            return try await create(tenantID: tenantID, name: name, role: role, clientID: clientID, createdBy: createdBy)
        }
    }

    /// One page of the tenant's keys, revoked ones included, oldest first, and the cursor of the next page.
    public func list(tenantID: UUID, limit: Int = 100, after cursor: String? = nil) async throws -> (entries: [APIKey], next: String?) {
        let list = PageCursor.list("keys", tenantID: tenantID, filters: [])
        return try await PageCursor.paging(list, after: cursor) { position in
            try await pool.withConnection { connection in
                let rows = try connection.query(
                    """
                    SELECT \(Self.columns), k.created_at::text AS cursor_at FROM api_keys k
                    WHERE k.tenant_id = $1 AND ($2::timestamptz IS NULL OR (k.created_at, k.id) > ($2::timestamptz, $3::uuid))
                    ORDER BY k.created_at, k.id
                    LIMIT $4
                    """,
                    [.uuid(tenantID), PostgresValue(position?.at), PostgresValue(position?.id), .int(limit + 1)]
                ).rows
                return try PageCursor.page(list, of: rows, limit: limit, Self.key(from:))
            }
        }
    }

    public func get(tenantID: UUID, id: UUID) async throws -> APIKey? {
        try await pool.withConnection { connection in
            try connection.query(
                "SELECT \(Self.columns) FROM api_keys k WHERE k.tenant_id = $1 AND k.id = $2",
                [.uuid(tenantID), .uuid(id)]
            ).rows.first.map(Self.key(from:))
        }
    }

    /// Revokes a key of the tenant; `nil` when the tenant has no such key. Revoking twice keeps
    /// the first time.
    ///
    /// The tenant's state version moves in the same transaction, and the revocation is announced
    /// to every instance (``AccessChange``): one that still took the key from its cache before it
    /// heard makes no decision with it, since a decision made from the tenant's state as it was
    /// before fails to commit, and is made again from the state that lists the key as revoked.
    public func revoke(tenantID: UUID, id: UUID) async throws -> APIKey? {
        try await pool.withTransaction { connection in
            guard let revoked = try connection.query(
                "UPDATE api_keys k SET revoked_at = coalesce(k.revoked_at, now()) WHERE k.tenant_id = $1 AND k.id = $2 RETURNING \(Self.columns)",
                [.uuid(tenantID), .uuid(id)]
            ).rows.first.map(Self.key(from:)) else { return nil }
            try TenantStateVersion.bump(tenantID, on: connection)
            try AccessChange.keyRevoked(id).announce(on: connection)
            return revoked
        }
    }

    /// The longest an instance trusts a key it read without asking the database again
    /// (`COUNTERSIGN_API_KEY_CACHE_SECONDS` at most): a key revoked longer ago is refused by
    /// every instance's authentication already.
    public static let longestCacheSeconds = 3600

    /// The key a presented token names, if its secret matches, revoked or not: the caller decides
    /// what a revoked key or a disabled tenant means to it (`countersign dev` makes new demo
    /// keys). Requests are authenticated through `find` and `matches` instead, whose results the
    /// key cache keeps.
    public func lookup(_ token: APIKeyToken) async throws -> Authenticated? {
        guard let found = try await find(lookupID: token.lookupID), Self.matches(token, hash: found.secretHash) else { return nil }
        return found
    }

    /// The key with this public lookup id, whatever secret was presented with it; the caller
    /// compares (``matches(_:hash:)``).
    public func find(lookupID: String) async throws -> Authenticated? {
        try await pool.withConnection { connection in
            try connection.query(
                """
                SELECT \(Self.columns), k.secret_hash, t.disabled_at IS NOT NULL AS tenant_disabled
                FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
                WHERE k.lookup_id = ANY($1::text[])
                """,
                [.textArray([lookupID, Self.storedLookupID(lookupID, bound: true)])]
            ).rows.first.map { row in
                Authenticated(
                    key: try Self.key(from: row),
                    tenantDisabled: try row.decode("tenant_disabled"),
                    secretHash: try row.decode("secret_hash")
                )
            }
        }
    }

    /// Whether `token` is the key whose stored hash is `hash`, compared in constant time.
    public static func matches(_ token: APIKeyToken, hash: [UInt8]) -> Bool {
        ConstantTime.equals(Self.hash(of: token), hash)
    }

    static func hash(of token: APIKeyToken) -> [UInt8] {
        Digest.hash(.sha256, token.text)
    }

    static let columns = "k.id, k.tenant_id, k.lookup_id, k.role, k.name, k.created_at, k.revoked_at, k.client_id"

    /// How a key's lookup id is stored: as it is, or, for a key bound to one client, marked, so
    /// that an instance of a release before the binding (which looks the plain id up) does not
    /// find the key and refuses it (401) rather than take it as a fleet key, during an upgrade.
    static func storedLookupID(_ lookupID: String, bound: Bool) -> String {
        bound ? boundMark + lookupID : lookupID
    }

    private static let boundMark = "bound:"

    static func key(from row: PostgresRow) throws -> APIKey {
        let stored: String = try row.decode("lookup_id")
        let lookupID = stored.hasPrefix(boundMark) ? String(stored.dropFirst(boundMark.count)) : stored
        return APIKey(
            id: try row.decode("id"),
            tenantID: try row.decode("tenant_id"),
            name: try row.decode("name"),
            role: try row.decodeEnum("role"),
            prefix: APIKeyToken(lookupID: lookupID, secret: "").prefix,
            createdAt: try row.decode("created_at"),
            revokedAt: try row.decode("revoked_at"),
            clientID: try row.decode("client_id")
        )
    }
}
