import CountersignCore
import CountersignPostgres
import CountersignStorage
import Foundation
import Testing

@Suite("Policy and credential locks")
struct PolicyCredentialLockTests {
    /// An admin deleting a credential a client submitted (`permanent`), while another admin saves
    /// the policy: the save holds the tenant and then writes the policy row; the deletion must not
    /// hold that row (it read the policy to see whether a rule names the credential) and then wait
    /// for the tenant, which deadlocked and failed one of the two with 503 service_busy.
    @Test func deletingAClientsCredentialWhileThePolicyIsSavedDoesNotDeadlock() async throws {
        try await StorageFixture.run { fixture in
            let (tenantID, pool) = (fixture.tenantID, fixture.pool)
            let policies = PolicyStore(pool: pool)
            _ = try await policies.replace(tenantID: tenantID, expectedVersion: 0, with: Policy(), actor: "admin")
            let submitted = try await fixture.credentials.save(
                tenantID: tenantID,
                .init(
                    attributes: CredentialAttributes(host: "intranet.example.com", account: "alice"), domain: nil, label: nil, password: "typed",
                    owner: .client("alice-phone")
                ),
                actor: "client:alice-phone"
            ).credential
            let inserted = try await pool.withConnection { connection in
                try connection.execute(
                    "INSERT INTO rejection_counters (id, tenant_id, credential_id, space_key, failures, total_rejections) VALUES ($1, $2, $3, 'space', 1, 1)",
                    [.uuid(UUID.random()), .uuid(tenantID), .uuid(submitted.id)]
                )
            }
            #expect(inserted == 1)

            // Holds the credential's counter, so that the deletion stops after it read the policy.
            let held = Flag()
            let release = DispatchSemaphore(value: 0)
            let holder = Task {
                try await pool.withTransaction { connection in
                    try connection.execute("SELECT 1 FROM rejection_counters WHERE credential_id = $1 FOR UPDATE", [.uuid(submitted.id)])
                    held.set()
                    release.wait()
                }
            }
            try await DecisionStorageTests.waitUntil { held.isSet }
            let credentials = fixture.credentials
            let deletion = Task { try await credentials.delete(tenantID: tenantID, id: submitted.id, actor: "admin") }
            try await DecisionStorageTests.waitUntil { try await DecisionStorageTests.lockWaiters(pool) >= 1 }

            let saved = Flag()
            let save = Task {
                defer { saved.set() }
                return try await policies.replace(tenantID: tenantID, expectedVersion: 1, with: Policy(), actor: "admin")
            }
            // The save either commits at once or waits for the deletion's hold on the policy row.
            try await DecisionStorageTests.waitUntil {
                if saved.isSet { return true }
                return try await DecisionStorageTests.lockWaiters(pool) >= 2
            }
            release.signal()
            try await holder.value
            #expect(try await save.value.version == 2)
            #expect(try await deletion.value)
            #expect(try await fixture.credentials.get(tenantID: tenantID, id: submitted.id) == nil)
        }
    }
}
