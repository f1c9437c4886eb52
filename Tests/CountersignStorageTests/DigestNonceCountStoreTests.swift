import CountersignPostgres
import CountersignStorage
import CountersignTestSupport
import Foundation
import Testing

@Suite("Digest nonce counts")
struct DigestNonceCountStoreTests {
    /// Two pools on one migrated database, as two service instances would have, and a tenant
    /// with two credentials.
    static func withInstances(_ body: (DigestNonceCountStore, DigestNonceCountStore, PostgresPool, UUID, [UUID]) async throws -> Void) async throws {
        let url = try await TestDatabase.freshDatabase()
        let pools = (0..<2).map { _ in
            PostgresPool(configuration: TestDatabase.configuration(url, poolSize: 4), logger: StorageFixture.logger)
        }
        do {
            _ = try await MigrationRunner(migrations: try MigrationRunner.load(directory: StorageFixture.migrationsDirectory)).migrate(on: pools[0], logger: StorageFixture.logger)
            let tenant = UUID()
            let credentials = [UUID(), UUID()]
            try await pools[0].withTransaction { connection in
                try connection.execute("INSERT INTO tenants (id, name) VALUES ($1, $2)", [.uuid(tenant), .text("nonce-tests")])
                for (index, id) in credentials.enumerated() {
                    try connection.execute(
                        """
                        INSERT INTO credentials (id, tenant_id, kind, owner, host, is_proxy, account, sealed_secret)
                        VALUES ($1, $2, 'password', 'tenant', 'h.example', false, $3, $4)
                        """,
                        [.uuid(id), .uuid(tenant), .text("user\(index)"), .bytea([1, 2, 3])]
                    )
                }
            }
            try await body(DigestNonceCountStore(pool: pools[0]), DigestNonceCountStore(pool: pools[1]), pools[0], tenant, credentials)
        } catch {
            for pool in pools { await pool.close() }
            throw error
        }
        for pool in pools { await pool.close() }
    }

    @Test func countsFromOnePerCredentialAndNonce() async throws {
        try await Self.withInstances { store, _, _, tenant, credentials async throws in
            #expect(try await store.next(tenantID: tenant, credentialID: credentials[0], nonce: "abc", cnonce: "c")?.count == 1)
            #expect(try await store.next(tenantID: tenant, credentialID: credentials[0], nonce: "abc", cnonce: "c")?.count == 2)
            #expect(try await store.next(tenantID: tenant, credentialID: credentials[0], nonce: "abd", cnonce: "c")?.count == 1)
            #expect(try await store.next(tenantID: tenant, credentialID: credentials[1], nonce: "abc", cnonce: "c")?.count == 1)
            // A nonce far longer than an index entry may be is keyed by its hash.
            let long = String(repeating: "n", count: 16 * 1024)
            #expect(try await store.next(tenantID: tenant, credentialID: credentials[0], nonce: long, cnonce: "c")?.count == 1)
            #expect(try await store.next(tenantID: tenant, credentialID: credentials[0], nonce: long, cnonce: "c")?.count == 2)
            // Another tenant's view of the credential gets nothing.
            #expect(try await store.next(tenantID: UUID(), credentialID: credentials[0], nonce: "abc", cnonce: "c")?.count == nil)
        }
    }

    /// A `-sess` algorithm hashes the nonce's first cnonce into every header's A1: later callers
    /// get the one the first offered, on either instance.
    @Test func theFirstCnonceOfANonceIsKept() async throws {
        try await Self.withInstances { first, second, _, tenant, credentials async throws in
            let opening = try await first.next(tenantID: tenant, credentialID: credentials[0], nonce: "sess", cnonce: "c1")
            #expect(opening == DigestNonceCountStore.Use(count: 1, firstCnonce: "c1"))
            let later = try await second.next(tenantID: tenant, credentialID: credentials[0], nonce: "sess", cnonce: "c2")
            #expect(later == DigestNonceCountStore.Use(count: 2, firstCnonce: "c1"))
            let otherNonce = try await second.next(tenantID: tenant, credentialID: credentials[0], nonce: "other", cnonce: "c3")
            #expect(otherNonce?.firstCnonce == "c3")
        }
    }

    @Test func concurrentCallersOnTwoInstancesNeverShareACount() async throws {
        try await Self.withInstances { first, second, _, tenant, credentials async throws in
            let perInstance = 60
            let counts = try await withThrowingTaskGroup(of: UInt32?.self) { group in
                for index in 0..<(2 * perInstance) {
                    let store = index.isMultiple(of: 2) ? first : second
                    group.addTask { try await store.next(tenantID: tenant, credentialID: credentials[0], nonce: "shared-nonce", cnonce: "c")?.count }
                }
                var counts: [UInt32] = []
                for try await count in group { counts.append(try #require(count)) }
                return counts
            }
            #expect(counts.sorted() == Array(1...UInt32(2 * perInstance)))
        }
    }

    @Test func deletedCredentialsAndOldNoncesGo() async throws {
        try await Self.withInstances { store, _, pool, tenant, credentials async throws in
            #expect(try await store.next(tenantID: tenant, credentialID: credentials[0], nonce: "old", cnonce: "c")?.count == 1)
            #expect(try await store.next(tenantID: tenant, credentialID: credentials[1], nonce: "fresh", cnonce: "c")?.count == 1)
            _ = try await pool.withConnection { connection in
                try connection.execute("UPDATE digest_nonce_counts SET updated_at = now() - interval '2 days' WHERE credential_id = $1", [.uuid(credentials[0])])
            }
            #expect(try await store.purge(unusedFor: 86_400) == 1)
            #expect(try await store.next(tenantID: tenant, credentialID: credentials[0], nonce: "old", cnonce: "c")?.count == 1)
            #expect(try await store.next(tenantID: tenant, credentialID: credentials[1], nonce: "fresh", cnonce: "c")?.count == 2)

            _ = try await pool.withConnection { connection in
                try connection.execute("DELETE FROM credentials WHERE id = $1", [.uuid(credentials[1])])
            }
            // A deleted credential gets no count; its rows are never read again and go with the sweep.
            #expect(try await store.next(tenantID: tenant, credentialID: credentials[1], nonce: "fresh", cnonce: "c")?.count == nil)
            _ = try await pool.withConnection { connection in
                try connection.execute("UPDATE digest_nonce_counts SET updated_at = now() - interval '2 days' WHERE credential_id = $1", [.uuid(credentials[1])])
            }
            #expect(try await store.purge(unusedFor: 86_400) == 1)
        }
    }
}
