import CountersignPostgres
import CountersignStorage
import Foundation
import Testing

/// migrations/0020: private keys saved among a policy's trust anchors, before anchors were
/// refused unless they hold certificates only, are cut out of the policy and its versions.
@Suite("Private keys out of policies (migration 0020)")
struct PolicyKeyScrubMigrationTests {
    static let certificate = "-----BEGIN CERTIFICATE-----\nMIIBcert\n-----END CERTIFICATE-----\n"
    static let otherCertificate = "-----BEGIN CERTIFICATE-----\nMIIBother\n-----END CERTIFICATE-----\n"
    static func key(_ kind: String) -> String { "-----BEGIN \(kind)PRIVATE KEY-----\nMIIEsecret\(kind.count)\n-----END \(kind)PRIVATE KEY-----\n" }

    static func document(anchors: [String]) throws -> String {
        let document: [String: Any] = ["rules": [["id": "pinned", "then": ["serverTrust": ["anchors": anchors]]]]]
        return String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
    }

    @Test func keyBlocksAreCutOutAndCertificatesStay() async throws {
        try await StorageFixture.run { fixture in
            let saved = [
                Self.certificate + Self.key("") + Self.otherCertificate,
                Self.key("RSA ") + Self.certificate + Self.key("ENCRYPTED "),
                Self.otherCertificate,
            ]
            try await fixture.pool.withConnection { connection in
                _ = try connection.execute(
                    """
                    INSERT INTO policies (tenant_id, version, document, updated_by) VALUES ($1, 7, $2::jsonb, 'test')
                    ON CONFLICT (tenant_id) DO UPDATE SET version = 7, document = excluded.document
                    """,
                    [.uuid(fixture.tenantID), .text(try Self.document(anchors: saved))]
                )
                _ = try connection.execute(
                    "INSERT INTO policy_versions (tenant_id, version, document, created_by) VALUES ($1, 7, $2::jsonb, 'test')",
                    [.uuid(fixture.tenantID), .text(try Self.document(anchors: saved))]
                )
            }

            let migration = try MigrationRunner.load(directory: StorageFixture.migrationsDirectory).first { $0.version == 20 }
            try await fixture.pool.withConnection { connection in
                try connection.simpleQuery(try #require(migration).sql)
            }

            let expected = try JSONSerialization.jsonObject(
                with: Data(try Self.document(anchors: [Self.certificate + "\n" + Self.otherCertificate, "\n" + Self.certificate + "\n", Self.otherCertificate]).utf8)
            ) as? NSDictionary
            for table in ["policies", "policy_versions"] {
                let text: String = try await fixture.pool.withConnection { connection in
                    try connection.query("SELECT document::text AS document FROM \(table) WHERE tenant_id = $1 AND version = 7", [.uuid(fixture.tenantID)])
                        .rows[0].decode("document")
                }
                #expect(!text.contains("PRIVATE KEY") && !text.contains("secret"), "\(table): \(text)")
                let scrubbed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary
                #expect(scrubbed == expected, "\(table): \(text)")
            }
        }
    }
}
