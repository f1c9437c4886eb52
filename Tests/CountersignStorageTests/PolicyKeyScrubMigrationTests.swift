import CountersignPostgres
import CountersignStorage
import Foundation
import Testing

/// migrations/0020 and 0023: private keys saved among a policy's trust anchors, before anchors were
/// refused unless they hold certificates only, are cut out of the policy and its versions.
@Suite("Private keys out of policies (migrations 0020, 0023)")
struct PolicyKeyScrubMigrationTests {
    static let certificate = "-----BEGIN CERTIFICATE-----\nMIIBcert\n-----END CERTIFICATE-----\n"
    static let otherCertificate = "-----BEGIN CERTIFICATE-----\nMIIBother\n-----END CERTIFICATE-----\n"
    static func key(_ kind: String) -> String { "-----BEGIN \(kind)PRIVATE KEY-----\nMIIEsecret\(kind.count)\n-----END \(kind)PRIVATE KEY-----\n" }

    static func document(anchors: [String]) throws -> String {
        let document: [String: Any] = ["rules": [["id": "pinned", "then": ["serverTrust": ["anchors": anchors]]]]]
        return String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
    }

    @Test func keyBlocksAreCutOutAndCertificatesStay() async throws {
        try await Self.expectScrubbed(
            by: 20,
            saved: [Self.certificate + Self.key("") + Self.otherCertificate, Self.key("RSA ") + Self.certificate + Self.key("ENCRYPTED "), Self.otherCertificate],
            leaving: [Self.certificate + "\n" + Self.otherCertificate, "\n" + Self.certificate + "\n", Self.otherCertificate]
        )
    }

    /// migrations/0023: the key blocks 0020 left, which OpenSSL reads as text between blocks.
    @Test func indentedAndLowerCaseKeyBlocksAreCutOutToo() async throws {
        let indented = Self.key("").split(separator: "\n").map { "  \($0)\n" }.joined()
        let tabbed = Self.key("EC ").split(separator: "\n").map { "\t\($0)\n" }.joined()
        let lowerCased = Self.key("").split(separator: "\n").map { $0.hasPrefix("-----") ? $0.lowercased() : String($0) }.joined(separator: "\n") + "\n"
        try await Self.expectScrubbed(
            by: 23,
            saved: [Self.certificate + indented, tabbed + Self.otherCertificate, Self.certificate + lowerCased],
            leaving: [Self.certificate + "  \n", "\t\n" + Self.otherCertificate, Self.certificate + "\n"]
        )
    }

    /// Saves a policy (and a version of it) with `saved` as a rule's anchors, runs migration
    /// `version`, and expects `leaving` in both.
    static func expectScrubbed(by version: Int, saved: [String], leaving: [String]) async throws {
        try await StorageFixture.run { fixture in
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

            let migration = try MigrationRunner.load(directory: StorageFixture.migrationsDirectory).first { $0.version == version }
            try await fixture.pool.withConnection { connection in
                try connection.simpleQuery(try #require(migration).sql)
            }

            let expected = try JSONSerialization.jsonObject(with: Data(try Self.document(anchors: leaving).utf8)) as? NSDictionary
            for table in ["policies", "policy_versions"] {
                let text: String = try await fixture.pool.withConnection { connection in
                    try connection.query("SELECT document::text AS document FROM \(table) WHERE tenant_id = $1 AND version = 7", [.uuid(fixture.tenantID)])
                        .rows[0].decode("document")
                }
                #expect(!text.lowercased().contains("private key") && !text.contains("secret"), "\(table): \(text)")
                let scrubbed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary
                #expect(scrubbed == expected, "\(table): \(text)")
            }
        }
    }
}
