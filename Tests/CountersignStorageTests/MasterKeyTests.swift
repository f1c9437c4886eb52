import CountersignCore
import CountersignCrypto
import CountersignPostgres
import CountersignStorage
import Foundation
import Testing

/// Whether a master key is the database's, and its rotation.
@Suite("Master key")
struct MasterKeyTests {
    @Test func anotherMasterKeyIsRefusedBeforeAnyDataKeyExists() async throws {
        try await StorageFixture.run { fixture in
            #expect(try await fixture.vault.masterKeyMatchesDatabase() == true)
            let other = SecretVault(masterKey: try SymmetricKey.random(), pool: fixture.pool)
            #expect(try await other.masterKeyMatchesDatabase() == false)
            #expect(try await fixture.vault.masterKeyMatchesDatabase() == true)
            // Without a key, this database's secrets cannot be opened.
            #expect(try await SecretVault(masterKey: nil, pool: fixture.pool).masterKeyMatchesDatabase() == false)
        }
    }

    @Test func aDatabaseWithoutTheCheckIsJudgedByItsDataKeys() async throws {
        try await StorageFixture.run { fixture in
            _ = try await fixture.credential()
            // As a database set up before the check existed.
            try await Self.execute("DELETE FROM master_key_check", on: fixture.pool)
            let other = SecretVault(masterKey: try SymmetricKey.random(), pool: fixture.pool)
            #expect(try await other.masterKeyMatchesDatabase() == false)
            #expect(try await Self.checks(fixture.pool) == 0, "a wrong key leaves no check behind")
            #expect(try await fixture.vault.masterKeyMatchesDatabase() == true)
            #expect(try await Self.checks(fixture.pool) == 1)
        }
    }

    @Test func rotationSealsEveryDataKeyUnderTheNewKeyAndTheSecretsStillOpen() async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential(password: "before-rotation")
            let secondTenant = try await TenantStore(pool: fixture.pool).create(name: "second-\(UUID().uuidString.prefix(8))")
            _ = try await fixture.vault.key(for: secondTenant.id)

            let newKey = try SymmetricKey.random()
            #expect(try await fixture.vault.rotateMasterKey(to: newKey) == 2)

            let rotated = SecretVault(masterKey: newKey, pool: fixture.pool)
            #expect(try await rotated.masterKeyMatchesDatabase() == true)
            let store = CredentialStore(pool: fixture.pool, vault: rotated)
            #expect(try await store.password(tenantID: fixture.tenantID, id: credential.id, secretVersion: credential.secretVersion) == "before-rotation")
            let restartedWithTheOldKey = SecretVault(masterKey: fixture.masterKey, pool: fixture.pool)
            #expect(try await restartedWithTheOldKey.masterKeyMatchesDatabase() == false)

            // Run again with the same keys: already done, nothing changes.
            #expect(try await fixture.vault.rotateMasterKey(to: newKey) == nil)
            #expect(try await rotated.masterKeyMatchesDatabase() == true)
        }
    }

    @Test func aRotationFromAKeyThatIsNotTheDatabasesChangesNothing() async throws {
        try await StorageFixture.run { fixture in
            _ = try await fixture.credential()
            let before = try await Self.sealedDataKeys(fixture.pool)
            let stranger = SecretVault(masterKey: try SymmetricKey.random(), pool: fixture.pool)
            await #expect {
                _ = try await stranger.rotateMasterKey(to: try SymmetricKey.random())
            } throws: { ($0 as? CountersignError)?.code == .secretUnreadable }
            #expect(try await Self.sealedDataKeys(fixture.pool) == before)
            #expect(try await fixture.vault.masterKeyMatchesDatabase() == true)
        }
    }

    @Test func aRotationRunAgainSealsAnewADataKeyLeftUnderTheOldKey() async throws {
        try await StorageFixture.run { fixture in
            _ = try await fixture.vault.key(for: fixture.tenantID)
            let underOldKey = try await Self.sealedDataKeys(fixture.pool)[0]
            let newKey = try SymmetricKey.random()
            #expect(try await fixture.vault.rotateMasterKey(to: newKey) == 1)
            // As an instance of an earlier release, which knows no check value, would leave it.
            try await Self.setDataKey(underOldKey, tenant: fixture.tenantID, on: fixture.pool)
            #expect(try await fixture.vault.rotateMasterKey(to: newKey) == 1)
            #expect(try await fixture.vault.rotateMasterKey(to: newKey) == nil)
            let rotated = SecretVault(masterKey: newKey, pool: fixture.pool)
            _ = try await rotated.key(for: fixture.tenantID)

            // A data key no key opens stops the rotation, and nothing changes.
            try await Self.setDataKey(Array(repeating: 7, count: underOldKey.count), tenant: fixture.tenantID, on: fixture.pool)
            let before = try await Self.sealedDataKeys(fixture.pool)
            await #expect {
                _ = try await rotated.rotateMasterKey(to: try SymmetricKey.random())
            } throws: { ($0 as? CountersignError)?.code == .secretUnreadable }
            #expect(try await Self.sealedDataKeys(fixture.pool) == before)
        }
    }

    @Test func aRotationFromAWrongKeyOnADatabaseWithoutTheCheckSaysSo() async throws {
        try await StorageFixture.run { fixture in
            _ = try await fixture.credential()
            try await Self.execute("DELETE FROM master_key_check", on: fixture.pool)
            let stranger = SecretVault(masterKey: try SymmetricKey.random(), pool: fixture.pool)
            await #expect {
                _ = try await stranger.rotateMasterKey(to: try SymmetricKey.random())
            } throws: { error in
                (error as? CountersignError)?.code == .secretUnreadable && (error as? CountersignError)?.message.contains("not the one") == true
            }
        }
    }

    @Test func anInstanceLeftWithTheOldKeyCreatesNoDataKeyAfterARotation() async throws {
        try await StorageFixture.run { fixture in
            // This instance started before the rotation and kept its key.
            #expect(try await fixture.vault.masterKeyMatchesDatabase() == true)
            let operatorsVault = SecretVault(masterKey: fixture.masterKey, pool: fixture.pool)
            _ = try await operatorsVault.rotateMasterKey(to: try SymmetricKey.random())

            await #expect {
                _ = try await fixture.vault.key(for: fixture.tenantID)
            } throws: { ($0 as? CountersignError)?.code == .masterKeyUnavailable }
            #expect(try await Self.sealedDataKeys(fixture.pool).isEmpty, "no data key was left sealed under a key the database no longer has")
        }
    }

    private static func execute(_ sql: String, on pool: PostgresPool) async throws {
        _ = try await pool.withConnection { try $0.execute(sql) }
    }

    private static func setDataKey(_ sealed: [UInt8], tenant: UUID, on pool: PostgresPool) async throws {
        _ = try await pool.withConnection { try $0.execute("UPDATE tenant_data_keys SET sealed_key = $1 WHERE tenant_id = $2", [.bytea(sealed), .uuid(tenant)]) }
    }

    private static func checks(_ pool: PostgresPool) async throws -> Int64 {
        try await pool.withConnection { try $0.query("SELECT count(*) AS n FROM master_key_check").rows[0].decode("n", as: Int64.self) }
    }

    private static func sealedDataKeys(_ pool: PostgresPool) async throws -> [[UInt8]] {
        try await pool.withConnection { connection in
            try connection.query("SELECT sealed_key FROM tenant_data_keys ORDER BY tenant_id").rows.map { try $0.decode("sealed_key", as: [UInt8].self) }
        }
    }
}
