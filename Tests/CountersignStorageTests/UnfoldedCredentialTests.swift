import CountersignCore
import CountersignPostgres
import CountersignStorage
import Foundation
import Testing

/// Credentials saved before hosts and ports were compared folded (port 0 for the protocol's
/// default port, a host with a fully qualified name's trailing dot, an IPv6 address without
/// brackets), as rows saved by an earlier release, or written by instances of the previous release
/// while a rolling upgrade replaces them, hold them: saving the same keychain key again updates
/// that row in place, as it did before.
@Suite("Credentials saved unfolded")
struct UnfoldedCredentialTests {
    @Test(arguments: [
        // (as saved now, as the previous release stored it, as saved again)
        ("port", "www.example.com", "www.example.com"),
        ("host", "www.example.com.", "www.example.com."),
        ("host", "2001:db8::1", "2001:db8::1"),
    ])
    func savingAgainUpdatesTheRowInPlace(column: String, stored: String, savedAgain: String) async throws {
        try await StorageFixture.run { fixture in
            func save(host: String, port: Int, password: String) async throws -> (credential: Credential, created: Bool) {
                let attributes = CredentialAttributes(host: host, port: port, protocolName: "https", realm: "Intranet", account: "alice")
                let input = CredentialStore.Input(attributes: attributes, domain: nil, label: nil, password: password, owner: .client("device-1"))
                return try await fixture.credentials.save(tenantID: fixture.tenantID, input, actor: "test")
            }
            let first = try await save(host: savedAgain, port: 0, password: "old")
            // As the previous release stored it: port 0 as sent, the host as sent.
            try await fixture.pool.withConnection { connection in
                if column == "port" {
                    _ = try connection.execute("UPDATE credentials SET port = 0 WHERE id = $1", [.uuid(first.credential.id)])
                } else {
                    _ = try connection.execute("UPDATE credentials SET host = $2 WHERE id = $1", [.uuid(first.credential.id), .text(stored)])
                }
            }
            // The listing's host filter finds it too.
            let listed = try await fixture.credentials.list(tenantID: fixture.tenantID, host: savedAgain).entries
            #expect(listed.map(\.id) == [first.credential.id])

            let again = try await save(host: savedAgain, port: 0, password: "new")

            #expect(again.created == false)
            #expect(again.credential.id == first.credential.id)
            let rows = try await fixture.pool.withConnection { connection in
                try connection.query("SELECT count(*) AS n FROM credentials WHERE tenant_id = $1", [.uuid(fixture.tenantID)]).rows[0].decode("n", as: Int.self)
            }
            #expect(rows == 1)
        }
    }
}
