import CountersignCore
public import CountersignCrypto
import CountersignPostgres
import Foundation

/// Whether a master key is the database's, and moving the database to another one.
///
/// The database holds a check value (`master_key_check`, migrations/0013): a random key sealed
/// under the master key, which that key opens and no other does. The first instance that asks
/// leaves it, after making sure that its key opens the data keys already stored (a database set
/// up before the check existed has only those to tell). From then on a wrong master key is
/// refused at start even before any tenant has a data key, and a data key is only ever created
/// under the key the check value is sealed under.
extension SecretVault {
    /// Whether the master key is the one the database's secrets are sealed under. Without a master
    /// key: `nil` while the database holds nothing sealed under one, `false` once it does (this
    /// instance could open none of it: a key file left out of the deployment, say).
    public func masterKeyMatchesDatabase() async throws -> Bool? {
        guard let masterKey else {
            let holdsSealed = try await pool.withConnection { connection in
                try connection.query(
                    "SELECT EXISTS (SELECT 1 FROM master_key_check) OR EXISTS (SELECT 1 FROM tenant_data_keys) AS sealed"
                ).rows.first?.decode("sealed", as: Bool.self)
            }
            return holdsSealed == true ? false : nil
        }
        return try await pool.withTransaction { connection in
            try Self.isDatabaseKey(masterKey, on: connection, lockingCheck: false)
        }
    }

    /// Seals every tenant's data key, and the check value, under `newKey` instead of the master
    /// key, in one transaction. The secrets are sealed under the data keys and stay as they are.
    ///
    /// Run again, it seals anew what is still under the old key: a data key an instance of an
    /// earlier release (which knows no check value) created after the rotation.
    ///
    /// Returns how many data keys it sealed anew, or `nil` when everything was under `newKey`
    /// already.
    /// - Throws: `master_key_unavailable` without a master key; `secret_unreadable` when the
    ///   master key is not the database's, or a data key opens with neither key (nothing changes).
    public func rotateMasterKey(to newKey: SymmetricKey) async throws -> Int? {
        guard let masterKey else {
            throw CountersignError(.masterKeyUnavailable, "no current master key is configured (COUNTERSIGN_MASTER_KEY_FILE)")
        }
        let notTheDatabases = CountersignError(.secretUnreadable, "the current master key given is not the one this database's data keys are sealed under")
        // The check value must exist before the rotation locks it: a data key created while the
        // rotation runs then waits for it, and sees the new check value afterwards.
        _ = try await masterKeyMatchesDatabase()
        return try await pool.withTransaction { connection in
            // None left by the line above: the current key opens the stored data keys no more.
            guard let check = try connection.query("SELECT sealed FROM master_key_check FOR UPDATE").rows.first?.decode("sealed", as: [UInt8].self) else {
                throw notTheDatabases
            }
            let checkUnderNewKey = Self.checkOpens(check, with: newKey)
            guard checkUnderNewKey || Self.checkOpens(check, with: masterKey) else { throw notTheDatabases }
            // Instances of an earlier release create data keys without looking at the check
            // value: none may slip in between the read below and the commit.
            try connection.execute("LOCK TABLE tenant_data_keys IN SHARE ROW EXCLUSIVE MODE")
            var tenants: [String] = []
            var resealed: [String] = []
            for row in try connection.query("SELECT tenant_id, sealed_key FROM tenant_data_keys ORDER BY tenant_id").rows {
                let tenantID = try row.decode("tenant_id", as: UUID.self)
                let sealed = try row.decode("sealed_key", as: [UInt8].self)
                let associatedData = TenantSecretKey.associatedData(tenantID: tenantID, rowID: nil)
                if (try? AESGCM.openKey(sealed, under: newKey, associatedData: associatedData)) != nil { continue }
                guard let dataKey = try? AESGCM.openKey(sealed, under: masterKey, associatedData: associatedData) else {
                    throw CountersignError(.secretUnreadable, "the data key of tenant \(tenantID.text) opens with neither key; nothing was changed")
                }
                tenants.append(tenantID.text)
                resealed.append(try AESGCM.seal(dataKey, under: newKey, associatedData: associatedData).hexString)
            }
            if !tenants.isEmpty {
                try connection.execute(
                    """
                    UPDATE tenant_data_keys t SET sealed_key = decode(n.sealed, 'hex')
                    FROM unnest($1::uuid[], $2::text[]) AS n (tenant_id, sealed) WHERE t.tenant_id = n.tenant_id
                    """,
                    [.textArray(tenants), .textArray(resealed)]
                )
            }
            if !checkUnderNewKey {
                try connection.execute(
                    "UPDATE master_key_check SET sealed = $1, rotated_at = now()",
                    [.bytea(try AESGCM.seal(try SymmetricKey.random(), under: newKey, associatedData: Self.checkAssociatedData))]
                )
            }
            return tenants.isEmpty && checkUnderNewKey ? nil : tenants.count
        }
    }

    /// Whether `key` is the database's master key, in the caller's transaction, leaving the check
    /// value sealed under it if there is none yet and it opens the stored data keys. With
    /// `lockingCheck`, the check value stays locked (FOR SHARE) until the transaction ends, so
    /// that a rotation cannot change it meanwhile.
    static func isDatabaseKey(_ key: SymmetricKey, on connection: PostgresConnection, lockingCheck: Bool) throws -> Bool {
        let read = "SELECT sealed FROM master_key_check" + (lockingCheck ? " FOR SHARE" : "")
        if let check = try connection.query(read).rows.first?.decode("sealed", as: [UInt8].self) {
            return checkOpens(check, with: key)
        }
        if let stored = try connection.query("SELECT tenant_id, sealed_key FROM tenant_data_keys ORDER BY tenant_id LIMIT 1").rows.first {
            let associatedData = TenantSecretKey.associatedData(tenantID: try stored.decode("tenant_id"), rowID: nil)
            guard (try? AESGCM.openKey(try stored.decode("sealed_key"), under: key, associatedData: associatedData)) != nil else { return false }
        }
        // Instances starting at once on a new database may each try: the first insert wins, and
        // a key other than the winner's is refused below.
        try connection.execute(
            "INSERT INTO master_key_check (sealed) VALUES ($1) ON CONFLICT DO NOTHING",
            [.bytea(try AESGCM.seal(try SymmetricKey.random(), under: key, associatedData: checkAssociatedData))]
        )
        guard let check = try connection.query(read).rows.first?.decode("sealed", as: [UInt8].self) else {
            throw CountersignError(.internalError, "the master key check could not be stored")
        }
        return checkOpens(check, with: key)
    }

    private static func checkOpens(_ check: [UInt8], with key: SymmetricKey) -> Bool {
        (try? AESGCM.openKey(check, under: key, associatedData: checkAssociatedData)) != nil
    }

    private static let checkAssociatedData = Array("countersign/v1/master-key-check".utf8)
}
