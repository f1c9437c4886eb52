import CountersignPostgres
import Foundation

/// The tenant's decision-state version. Anything that changes what a cached decision could
/// depend on (policy, credentials, blocks) bumps it in its own transaction; decisions commit
/// only against the version they were made with (see `DecisionWriter`).
enum TenantStateVersion {
    static func bump(_ tenantID: UUID, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE tenants SET state_version = state_version + 1 WHERE id = $1", [.uuid(tenantID)])
    }
}

/// The audit trail of a credential.
enum CredentialHistory {
    static func record(
        _ event: String,
        credentialID: UUID,
        tenantID: UUID,
        actor: String,
        details: [String: String] = [:],
        on connection: PostgresConnection
    ) throws {
        let json = String(decoding: try JSONEncoder().encode(details), as: UTF8.self)
        try connection.execute(
            "INSERT INTO credential_history (tenant_id, credential_id, event, actor, details) VALUES ($1, $2, $3, $4, $5::jsonb)",
            [.uuid(tenantID), .uuid(credentialID), .text(event), .text(actor), .text(json)]
        )
    }
}
