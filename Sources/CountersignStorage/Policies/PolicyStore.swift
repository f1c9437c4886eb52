public import CountersignCore
import CountersignCrypto
public import CountersignPostgres
public import Foundation
import Synchronization

/// Each tenant's policy, replaced as a whole under optimistic concurrency, with every
/// version kept.
public struct PolicyStore: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// A policy and the version it is at. Version 0 is the empty policy of a tenant that never
    /// saved one.
    public struct Versioned: Sendable, Hashable {
        public var version: Int
        public var policy: Policy
        public var updatedAt: Date?
        public var updatedBy: String?
    }

    public func get(tenantID: UUID) async throws -> Versioned {
        try await pool.withConnection { connection in
            try Self.current(tenantID: tenantID, lock: false, on: connection) ?? Versioned(version: 0, policy: .empty)
        }
    }

    /// Replaces the policy if it is still at `expectedVersion`; a stale version is
    /// `policy_version_conflict`. Rules that name a missing credential are refused.
    public func replace(tenantID: UUID, expectedVersion: Int, with policy: Policy, actor: String) async throws -> Versioned {
        let document = String(decoding: try JSONEncoder().encode(policy), as: UTF8.self)
        return try await pool.withTransaction { connection in
            // The credentials a rule may name stay until this commits: a concurrent delete
            // (which checks the policy it can see) waits, then sees this policy. Taken before
            // the tenant row, in the order credential changes take them.
            let existing = try Self.referenceableIDs(tenantID: tenantID, on: connection)
            // Serializes edits of one tenant's policy, the first one included.
            try connection.execute("SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE", [.uuid(tenantID)])
            let current = try Self.current(tenantID: tenantID, lock: false, on: connection)?.version ?? 0
            guard current == expectedVersion else {
                throw CountersignError(.policyVersionConflict, "the policy is at version \(current), not \(expectedVersion); fetch it and apply your change again")
            }
            try policy.validate { existing.contains($0) }
            try Self.validateAnchors(of: policy)
            let version = current + 1
            try connection.execute(
                """
                INSERT INTO policies (tenant_id, version, document, updated_by) VALUES ($1, $2, $3::jsonb, $4)
                ON CONFLICT (tenant_id) DO UPDATE SET version = excluded.version, document = excluded.document,
                    updated_at = now(), updated_by = excluded.updated_by
                """,
                [.uuid(tenantID), .int(version), .text(document), .text(actor)]
            )
            try connection.execute(
                "INSERT INTO policy_versions (tenant_id, version, document, created_by) VALUES ($1, $2, $3::jsonb, $4)",
                [.uuid(tenantID), .int(version), .text(document), .text(actor)]
            )
            try TenantStateVersion.bump(tenantID, on: connection)
            guard let saved = try Self.current(tenantID: tenantID, lock: false, on: connection) else {
                throw CountersignError(.internalError, "the saved policy vanished")
            }
            return saved
        }
    }

    /// An earlier version of the policy; `nil` when there is none.
    public func version(_ version: Int, tenantID: UUID) async throws -> Versioned? {
        try await pool.withConnection { connection in
            try connection.query(
                "SELECT version, document::text AS document, created_at AS updated_at, created_by AS updated_by FROM policy_versions WHERE tenant_id = $1 AND version = $2",
                [.uuid(tenantID), .int(version)]
            ).rows.first.map(Self.versioned(from:))
        }
    }

    static func current(tenantID: UUID, lock: Bool, on connection: PostgresConnection) throws -> Versioned? {
        let known = decoded.withLock { $0[tenantID] }
        // The document only when the row changed since it was decoded here.
        guard let row = try connection.query(
            """
            SELECT version, updated_at, updated_by, xmin::text AS row_version,
                CASE WHEN xmin::text = $2 THEN NULL ELSE document::text END AS document
            FROM policies WHERE tenant_id = $1\(lock ? " FOR SHARE" : "")
            """,
            [.uuid(tenantID), PostgresValue(known?.rowVersion)]
        ).rows.first else { return nil }
        let rowVersion: String = try row.decode("row_version")
        if let known, known.rowVersion == rowVersion, try row.decode("document", as: String?.self) == nil { return known.versioned }
        let versioned = try versioned(from: row)
        decoded.withLock { decoded in
            if decoded.count >= decodedLimit { decoded.removeAll(keepingCapacity: true) }
            decoded[tenantID] = (rowVersion, versioned)
        }
        return versioned
    }

    /// Policies decoded in this process, by tenant, with the version of their row they were read
    /// at (`xmin`, which every update of the row moves, a migration's included). A policy of a
    /// thousand rules took longer to decode than the rest of a tenant's state to read, and every
    /// load of a tenant's state, every session opened and every rejection counted reads it.
    private static let decoded = Mutex<[UUID: (rowVersion: String, versioned: Versioned)]>([:])
    private static let decodedLimit = 10_000

    static func versioned(from row: PostgresRow) throws -> Versioned {
        let document: String = try row.decode("document")
        let policy: Policy
        do {
            let decoder = JSONDecoder()
            decoder.userInfo[HostPattern.savedEarlier] = true
            policy = try decoder.decode(Policy.self, from: Data(document.utf8))
        } catch {
            throw CountersignError(.internalError, "the stored policy does not decode with this version")
        }
        return Versioned(version: try row.decode("version"), policy: policy, updatedAt: try row.decode("updated_at"), updatedBy: try row.decode("updated_by"))
    }

    /// What a rule may name: the tenant's own credentials (not those of one client or session)
    /// as `credentialId`, its client identities as `identityId`.
    static func referenceableIDs(tenantID: UUID, on connection: PostgresConnection) throws -> Set<CredentialReference> {
        let rows = try connection.query("SELECT id, kind FROM credentials WHERE tenant_id = $1 AND owner = 'tenant' FOR KEY SHARE", [.uuid(tenantID)])
        return Set(
            try rows.rows.map { row in
                let id = try row.decode("id", as: UUID.self).text
                return try row.decode("kind", as: String.self) == CredentialKind.clientIdentity.rawValue ? .identity(id) : .credential(id)
            }
        )
    }

    /// Trust anchors must be PEM certificates: one that does not parse would make every
    /// evaluation of its rule fail, so it is refused when the policy is saved. So is any other
    /// block beside them: the policy is stored as it is sent, in the clear, shown to every admin
    /// and kept in every version, and a private key pasted with a chain would live there.
    static func validateAnchors(of policy: Policy) throws {
        for (index, rule) in policy.rules.enumerated() {
            for (anchorIndex, anchor) in (rule.then.trust?.anchors ?? []).enumerated() {
                do {
                    _ = try Certificate.parseCertificatesOnly(pem: anchor)
                } catch {
                    throw CountersignError(
                        .invalidPolicy,
                        "rules[\(index)].then.trust.anchors[\(anchorIndex)] is not a PEM certificate (\(error.code.rawValue): \(error.message))"
                    )
                }
            }
        }
    }
}
