import CountersignCore
public import CountersignPostgres
public import Foundation

/// Rejection counters as admins see and reset them.
public struct CounterStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// One counter: a credential's rejections in one protection space.
    public struct Entry: Sendable, Codable, Hashable {
        public struct Client: Sendable, Codable, Hashable {
            public var clientId: String
            public var rejections: Int
            public var lastRejectionAt: Date
        }

        public var id: UUID
        public var credentialId: UUID
        public var account: String
        public var host: String
        /// Target, protocol, host, port, realm and method, `|`-separated.
        public var protectionSpace: String
        /// Rejections since the last accepted outcome or reset.
        public var failures: Int
        public var totalRejections: Int
        public var lastRejectionAt: Date?
        public var blockedUntil: Date?
        public var blocks: Int
        public var lastBlockedAt: Date?
        /// The clients refused most recently, ``listedClients`` at most.
        public var clients: [Client]
        /// Every client the counter ever counted a rejection of.
        public var clientCount: Int

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(credentialId, forKey: .credentialId)
            try container.encode(account, forKey: .account)
            try container.encode(host, forKey: .host)
            try container.encode(protectionSpace, forKey: .protectionSpace)
            try container.encode(failures, forKey: .failures)
            try container.encode(totalRejections, forKey: .totalRejections)
            try container.encode(lastRejectionAt, forKey: .lastRejectionAt)
            try container.encode(blockedUntil, forKey: .blockedUntil)
            try container.encode(blocks, forKey: .blocks)
            try container.encode(lastBlockedAt, forKey: .lastBlockedAt)
            try container.encode(clients, forKey: .clients)
            try container.encode(clientCount, forKey: .clientCount)
        }
    }

    /// The most clients a counter lists: a credential a whole fleet keeps sending has a client
    /// per device, and listing them all made one page tens of megabytes and seconds of work.
    public static let listedClients = 50

    /// One page of counters, newest first, and the cursor of the next page; `blocked` keeps only
    /// those blocking now (true) or not (false). Ordered by when each counter was created, which
    /// never changes: by its last rejection, which every rejection moves, a counter rejected while
    /// an admin paged jumped ahead of the cursor and came on no page.
    public func list(
        tenantID: UUID,
        credentialID: UUID? = nil,
        blocked: Bool? = nil,
        limit: Int = 100,
        after cursor: String? = nil
    ) async throws -> (entries: [Entry], next: String?) {
        let list = PageCursor.list("counters", tenantID: tenantID, filters: [credentialID?.text, blocked.map { "\($0)" }])
        return try await PageCursor.paging(list, after: cursor) { position in
            try await pool.withConnection { connection in
                let rows = try Self.rows(
                    where: """
                        rc.tenant_id = $1 AND ($2::uuid IS NULL OR rc.credential_id = $2::uuid) AND ($3::boolean IS NULL OR coalesce(rc.blocked_until > now(), false) = $3::boolean)
                          AND ($4::timestamptz IS NULL OR (rc.created_at, rc.id) < ($4::timestamptz, $5::uuid))
                        """,
                    [.uuid(tenantID), PostgresValue(credentialID), blocked.map(PostgresValue.bool) ?? .null, PostgresValue(position?.at), PostgresValue(position?.id)],
                    limit: limit + 1,
                    on: connection
                )
                return try PageCursor.page(list, of: rows, limit: limit, Self.entry(from:))
            }
        }
    }

    public func get(tenantID: UUID, id: UUID) async throws -> Entry? {
        try await pool.withConnection { connection in
            try Self.entries(where: "rc.tenant_id = $1 AND rc.id = $2", [.uuid(tenantID), .uuid(id)], on: connection).first
        }
    }

    /// Sets the counter's failures to zero and lifts its block; its next block lasts the rule's
    /// `blockSeconds` again. `nil` when there is no such counter.
    public func reset(tenantID: UUID, id: UUID, actor: String) async throws -> Entry? {
        try await pool.withTransaction { connection in
            guard let credentialID = try connection.query(
                """
                UPDATE rejection_counters SET failures = 0, blocked_until = NULL, repeated_blocks = 0, updated_at = now()
                WHERE tenant_id = $1 AND id = $2 RETURNING credential_id
                """,
                [.uuid(tenantID), .uuid(id)]
            ).rows.first?.decode("credential_id", as: UUID.self) else { return nil }
            try CredentialHistory.record("counter_reset", credentialID: credentialID, tenantID: tenantID, actor: actor, details: ["counter": id.text], on: connection)
            try TenantStateVersion.bump(tenantID, on: connection)
            return try Self.entries(where: "rc.tenant_id = $1 AND rc.id = $2", [.uuid(tenantID), .uuid(id)], on: connection).first
        }
    }

    static func entries(where condition: String, _ parameters: [PostgresValue], on connection: PostgresConnection) throws -> [Entry] {
        try rows(where: condition, parameters, on: connection).map(entry(from:))
    }

    /// The counters `condition` selects, newest first, each with `cursor_at`, the time a page
    /// cursor carries.
    static func rows(where condition: String, _ parameters: [PostgresValue], limit: Int? = nil, on connection: PostgresConnection) throws -> [PostgresRow] {
        let limitClause = limit == nil ? "" : "LIMIT $\(parameters.count + 1)"
        return try connection.query(
            """
            SELECT rc.id, rc.credential_id, c.account, c.host, rc.space_key, rc.failures, rc.total_rejections, rc.last_rejection_at,
                CASE WHEN rc.blocked_until > now() THEN rc.blocked_until END AS blocked_until, rc.blocks, rc.last_blocked_at,
                coalesce((SELECT jsonb_agg(jsonb_build_object('clientId', cc.client_id, 'rejections', cc.rejections,
                    'lastRejectionAt', to_char(cc.last_rejection_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                    ORDER BY cc.last_rejection_at DESC, cc.client_id)
                    FROM (SELECT * FROM rejection_counter_clients recent WHERE recent.counter_id = rc.id
                          ORDER BY recent.last_rejection_at DESC, recent.client_id LIMIT \(Self.listedClients)) cc), '[]')::text AS clients,
                (SELECT count(*) FROM rejection_counter_clients cc WHERE cc.counter_id = rc.id) AS client_count,
                rc.created_at::text AS cursor_at
            FROM rejection_counters rc JOIN credentials c ON c.id = rc.credential_id
            WHERE \(condition)
            ORDER BY rc.created_at DESC, rc.id DESC
            \(limitClause)
            """,
            parameters + (limit.map { [.int($0)] } ?? [])
        ).rows
    }

    static let clientsDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601withFractions
        return decoder
    }()

    static func entry(from row: PostgresRow) throws -> Entry {
        let clients: String = try row.decode("clients")
        return Entry(
            id: try row.decode("id"),
            credentialId: try row.decode("credential_id"),
            account: try row.decode("account"),
            host: try row.decode("host"),
            protectionSpace: try row.decode("space_key"),
            failures: try row.decode("failures"),
            totalRejections: try row.decode("total_rejections"),
            lastRejectionAt: try row.decode("last_rejection_at"),
            blockedUntil: try row.decode("blocked_until"),
            blocks: try row.decode("blocks"),
            lastBlockedAt: try row.decode("last_blocked_at"),
            clients: try clientsDecoder.decode([Entry.Client].self, from: Data(clients.utf8)),
            clientCount: Int(try row.decode("client_count", as: Int64.self))
        )
    }
}

extension JSONDecoder.DateDecodingStrategy {
    /// RFC 3339 with milliseconds, as the database formats them in JSON it builds.
    static let iso8601withFractions = JSONDecoder.DateDecodingStrategy.custom { decoder in
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a timestamp"))
        }
        return date
    }
}
