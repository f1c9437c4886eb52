import CountersignCore
import CountersignPostgres
import CountersignStorage
import Foundation
import Testing

/// migrations/0018: credentials saved before hosts were compared folded (no trailing dot, IPv6 in
/// brackets) are folded, so that they still fit the challenges of their host.
@Suite("Credential hosts folded (migration 0018)")
struct CredentialHostMigrationTests {
    @Test func hostsAreFoldedUnlessATwinHasTheFoldedHost() async throws {
        try await StorageFixture.run { fixture in
            func save(_ host: String) async throws -> UUID {
                let attributes = CredentialAttributes(
                    host: host, port: 443, protocolName: "https", realm: "Intranet", path: nil, authenticationMethod: nil, isProxy: false, account: "alice")
                let input = CredentialStore.Input(attributes: attributes, domain: nil, label: nil, password: "pw", owner: .tenant(submittedBy: nil))
                return try await fixture.credentials.save(tenantID: fixture.tenantID, input, actor: "test").credential.id
            }
            let solo = try await save("solo.example.com")
            let twin = try await save("twin.example.com")
            let dottedTwin = try await save("other.example.com")
            let bareIPv6 = try await save("[2001:db8::1]")
            // As a release before this one saved them: with the dot.
            try await fixture.pool.withConnection { connection in
                _ = try connection.execute("UPDATE credentials SET host = 'solo.example.com.' WHERE id = $1", [.uuid(solo)])
                _ = try connection.execute("UPDATE credentials SET host = 'twin.example.com.' WHERE id = $1", [.uuid(dottedTwin)])
                _ = try connection.execute("UPDATE credentials SET host = '2001:db8::1' WHERE id = $1", [.uuid(bareIPv6)])
            }

            let migration = try MigrationRunner.load(directory: StorageFixture.migrationsDirectory).first { $0.version == 18 }
            try await fixture.pool.withConnection { connection in
                try connection.simpleQuery(try #require(migration).sql)
            }

            let hosts = try await fixture.pool.withConnection { connection in
                try connection.query("SELECT id, host FROM credentials WHERE tenant_id = $1", [.uuid(fixture.tenantID)]).rows
                    .reduce(into: [UUID: String]()) { $0[try $1.decode("id", as: UUID.self)] = try $1.decode("host", as: String.self) }
            }
            #expect(hosts == [solo: "solo.example.com", twin: "twin.example.com", dottedTwin: "twin.example.com.", bareIPv6: "[2001:db8::1]"])
        }
    }
}
