public import CountersignCore
public import CountersignPostgres
public import Foundation

/// Tenants, as the operator manages them.
public struct TenantStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    public func create(name: String) async throws -> Tenant {
        let id = UUID.random()
        do {
            return try await pool.withConnection { connection in
                let rows = try connection.query(
                    "INSERT INTO tenants (id, name) VALUES ($1, $2) RETURNING \(Self.columns)",
                    [.uuid(id), .text(name)]
                )
                return try Self.tenant(from: rows.rows[0])
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            throw CountersignError(.tenantNameTaken, "a tenant named '\(name)' already exists")
        }
    }

    /// One page of the tenants, oldest first, and the cursor of the next page.
    public func list(limit: Int = 100, after cursor: String? = nil) async throws -> (entries: [Tenant], next: String?) {
        try await PageCursor.paging("tenants", after: cursor) { position in
            try await pool.withConnection { connection in
                let rows = try connection.query(
                    """
                    SELECT \(Self.columns), created_at::text AS cursor_at FROM tenants
                    WHERE $1::timestamptz IS NULL OR (created_at, id) > ($1::timestamptz, $2::uuid)
                    ORDER BY created_at, id
                    LIMIT $3
                    """,
                    [PostgresValue(position?.at), PostgresValue(position?.id), .int(limit + 1)]
                ).rows
                return try PageCursor.page("tenants", of: rows, limit: limit, Self.tenant(from:))
            }
        }
    }

    public func get(id: UUID) async throws -> Tenant? {
        try await pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM tenants WHERE id = $1", [.uuid(id)]).rows.first.map(Self.tenant(from:))
        }
    }

    public func get(name: String) async throws -> Tenant? {
        try await pool.withConnection { connection in
            try connection.query("SELECT \(Self.columns) FROM tenants WHERE name = $1", [.text(name)]).rows.first.map(Self.tenant(from:))
        }
    }

    /// Disables or re-enables a tenant; `nil` when there is no such tenant. Disabling twice keeps
    /// the first time.
    ///
    /// The tenant's state version moves with it, and the change is announced to every instance
    /// (``AccessChange``): one that still took a key of the tenant from its cache before it heard
    /// makes no decision with it, since a decision made from the tenant's state as it was before
    /// fails to commit, and is made again from the state that says disabled.
    public func setDisabled(id: UUID, _ disabled: Bool) async throws -> Tenant? {
        try await pool.withTransaction { connection in
            let sql =
                disabled
                ? "UPDATE tenants SET disabled_at = coalesce(disabled_at, now()), state_version = state_version + 1 WHERE id = $1 RETURNING \(Self.columns)"
                : "UPDATE tenants SET disabled_at = NULL, state_version = state_version + 1 WHERE id = $1 RETURNING \(Self.columns)"
            guard let tenant = try connection.query(sql, [.uuid(id)]).rows.first.map(Self.tenant(from:)) else { return nil }
            try AccessChange.tenantSwitched(id).announce(on: connection)
            return tenant
        }
    }

    static let columns = "id, name, created_at, disabled_at"

    static func tenant(from row: PostgresRow) throws -> Tenant {
        Tenant(
            id: try row.decode("id"),
            name: try row.decode("name"),
            createdAt: try row.decode("created_at"),
            disabledAt: try row.decode("disabled_at")
        )
    }
}
