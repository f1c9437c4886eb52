import CountersignCore
public import CountersignCrypto
public import CountersignPostgres
public import Foundation
import Synchronization

/// Seals and opens credential secrets: AES-256-GCM under a per-tenant data key, which is
/// itself sealed under the master key. The master key never enters the database; the data
/// keys are stored sealed and kept opened in memory once used.
///
/// Every seal binds the tenant and the row as associated data, so a sealed secret copied to
/// another row or another tenant does not open.
public final class SecretVault: Sendable {
    let masterKey: SymmetricKey?
    let pool: PostgresPool
    private let dataKeys = Mutex<[UUID: SymmetricKey]>([:])

    /// `masterKey` `nil`: the service runs, but nothing that needs a secret does.
    public init(masterKey: SymmetricKey?, pool: PostgresPool) {
        self.masterKey = masterKey
        self.pool = pool
    }

    /// The tenant's data key, created on first use. Created and committed on its own
    /// connection, never inside a caller's transaction: a key that rolled back after secrets
    /// were sealed under it would leave them unreadable.
    public func key(for tenantID: UUID) async throws -> TenantSecretKey {
        if let key = dataKeys.withLock({ $0[tenantID] }) { return TenantSecretKey(tenantID: tenantID, key: key) }
        guard let masterKey else {
            throw CountersignError(.masterKeyUnavailable, "no master key is configured (COUNTERSIGN_MASTER_KEY_FILE)")
        }
        let tenantData = TenantSecretKey.associatedData(tenantID: tenantID, rowID: nil)
        // Two instances may create a tenant's first data key at once: the first insert wins
        // and both use the stored one.
        let candidate = try AESGCM.seal(try SymmetricKey.random(), under: masterKey, associatedData: tenantData)
        let sealed = try await pool.withTransaction { connection in
            // A data key sealed under a key that is no longer the database's would open on this
            // instance alone (a rotation ran since it started).
            guard try Self.isDatabaseKey(masterKey, on: connection, lockingCheck: true) else {
                throw CountersignError(
                    .masterKeyUnavailable,
                    "this instance's master key is not the database's (a rotation ran since it started, or it started with another key while the database was out of reach): restart it with the database's key (COUNTERSIGN_MASTER_KEY_FILE)"
                )
            }
            try connection.execute(
                "INSERT INTO tenant_data_keys (tenant_id, sealed_key) VALUES ($1, $2) ON CONFLICT (tenant_id) DO NOTHING",
                [.uuid(tenantID), .bytea(candidate)]
            )
            let rows = try connection.query("SELECT sealed_key FROM tenant_data_keys WHERE tenant_id = $1", [.uuid(tenantID)])
            return try rows.rows.first?.decode("sealed_key", as: [UInt8].self)
        }
        guard let sealed else { throw CountersignError(.notFound, "no such tenant") }
        let key: SymmetricKey
        do {
            key = try AESGCM.openKey(sealed, under: masterKey, associatedData: tenantData)
        } catch {
            throw CountersignError(.secretUnreadable, "the tenant's data key does not open with this master key")
        }
        dataKeys.withLock { $0[tenantID] = key }
        return TenantSecretKey(tenantID: tenantID, key: key)
    }
}

/// One tenant's opened data key.
public struct TenantSecretKey: Sendable {
    public let tenantID: UUID
    let key: SymmetricKey

    /// Seals `secret` for row `rowID` of this tenant. `exportable` (`Credential.exportable`) is
    /// sealed with it: a row whose flag was turned without sealing again (by a release that does
    /// not know it, or by hand) does not open, rather than open as exportable.
    public func seal(_ secret: [UInt8], rowID: UUID, exportable: Bool = true) throws -> [UInt8] {
        try AESGCM.seal(secret, key: key, associatedData: Self.associatedData(tenantID: tenantID, rowID: rowID, exportable: exportable))
    }

    /// Opens a secret sealed for row `rowID` of this tenant, as `exportable` says it was.
    public func open(_ sealed: [UInt8], rowID: UUID, exportable: Bool = true) throws -> [UInt8] {
        do {
            return try AESGCM.open(sealed, key: key, associatedData: Self.associatedData(tenantID: tenantID, rowID: rowID, exportable: exportable))
        } catch {
            throw CountersignError(
                .secretUnreadable,
                "a stored secret does not open: it was not sealed for this credential of this tenant under this master key; set the secret again"
            )
        }
    }

    static func associatedData(tenantID: UUID, rowID: UUID?, exportable: Bool = true) -> [UInt8] {
        Array("countersign/v1/\(tenantID.text)/\(rowID?.text ?? "data-key")\(exportable ? "" : "/unexportable")".utf8)
    }
}
