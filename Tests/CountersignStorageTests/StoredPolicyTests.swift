import CountersignCore
import CountersignPostgres
import CountersignStorage
import Foundation
import Testing

/// A policy saved by an earlier release holds what that release took: it must still load, or
/// every challenge of its tenant fails.
@Suite("Stored policies")
struct StoredPolicyTests {
    /// Globs with a port (`example.com:443`) were taken before they were refused: such a rule
    /// matches no host (no host has a port), and the others still decide. `*:443` matched IPv6
    /// addresses ending in a group `443` until 0.27.0 refused it.
    @Test(arguments: ["example.com:443", "10.0.0.1:8080", "intranet:80", "*:443"])
    func aGlobRefusedSinceStillLoadsAndMatchesNoHost(glob: String) async throws {
        try await StorageFixture.run { fixture in
            let document = #"{"rules": [{"id": "old", "match": {"host": "\#(glob)"}, "then": {"disposition": "rejectProtectionSpace"}}, {"id": "rest", "match": {}, "then": {"disposition": "performDefaultHandling"}}]}"#
            try await fixture.pool.withConnection { connection in
                _ = try connection.execute(
                    "INSERT INTO policies (tenant_id, version, document, updated_by) VALUES ($1, 1, $2::jsonb, 'earlier release')",
                    [.uuid(fixture.tenantID), .text(document)]
                )
            }

            let state = try #require(try await fixture.state.tenantState(fixture.tenantID))
            let rules = state.policy.policy.rules
            #expect(rules.map(\.id) == ["old", "rest"])
            #expect(rules.first?.match.host?.pattern == glob)
            for host in ["example.com", "10.0.0.1", "intranet", "::1", "2001:db8::443"] {
                let space = ProtectionSpace(host: host, port: 443, protocolName: "https", authenticationMethod: .httpBasic).normalized
                #expect(rules.first?.match.matches(space) == false)
            }
            #expect(try await PolicyStore(pool: fixture.pool).get(tenantID: fixture.tenantID).policy.rules.count == 2)
        }
    }
}
