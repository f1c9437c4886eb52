import CountersignCore
import CountersignPostgres
import CountersignStorage
import Foundation
import Synchronization
import Testing

/// A tenant's state brought up to date from an earlier one reads what changed (migration 0027),
/// and must come out as a whole read does.
@Suite("Credential changes")
struct CredentialChangesTests {
    /// What a decision sees of a state's credentials.
    static func view(_ state: DecisionStateStore.TenantState) -> [Credential] {
        state.credentials.all.sorted { $0.id.uuidString < $1.id.uuidString }
    }

    @Test func aStateBuiltOnAnEarlierOneIsTheWholeState() async throws {
        try await StorageFixture.run { fixture in
            let kept = try await fixture.credential(account: "kept")
            let changed = try await fixture.credential(account: "changed")
            let deleted = try await fixture.credential(account: "deleted")
            let session = try await fixture.session(clientID: "device-9")
            let base = try #require(try await fixture.state.tenantState(fixture.tenantID))
            #expect(base.credentials.all.count == 3)

            _ = try await fixture.credentials.update(tenantID: fixture.tenantID, id: changed.id, .init(label: "relabelled", password: "n3w"), actor: "test")
            #expect(try await fixture.credentials.delete(tenantID: fixture.tenantID, id: deleted.id, actor: "test"))
            let added = try await fixture.credential(account: "added")
            let space = ProtectionSpace(host: "files.example.com", port: 443, protocolName: "https", realm: "Files", authenticationMethod: .httpBasic)
            let permanent = try await fixture.credentials.submit(
                tenantID: fixture.tenantID, session: session, space: space, user: "typed", password: "p", domain: nil, persistence: .permanent
            ).credential
            let forSession = try await fixture.credentials.submit(
                tenantID: fixture.tenantID, session: session, space: space, user: "typed-once", password: "p", domain: nil, persistence: .forSession
            ).credential

            let whole = try #require(try await fixture.state.tenantState(fixture.tenantID))
            let built = try #require(try await fixture.state.tenantState(fixture.tenantID, after: base))
            #expect(built.version == whole.version)
            #expect(Self.view(built) == Self.view(whole))
            let ids = Set(built.credentials.all.map(\.id))
            #expect(ids == [kept.id, changed.id, added.id, permanent.id])
            #expect(!ids.contains(forSession.id))
            #expect(built.credentials.credential(id: changed.id)?.label == "relabelled")
            #expect(built.credentials.credential(id: changed.id)?.secretVersion == changed.secretVersion + 1)
            #expect(built.credentials.credentials(host: "files.example.com").map(\.id) == [permanent.id])

            // Nothing changed since: the same credentials, at the same version.
            let again = try #require(try await fixture.state.tenantState(fixture.tenantID, after: built))
            #expect(again.version == built.version)
            #expect(Self.view(again) == Self.view(whole))
        }
    }

    /// A state's version must say what it holds: a credential changed in a transaction that
    /// committed after a state was read is stamped above that state's version.
    @Test func aChangeIsStampedAboveEveryStateReadBeforeItsCommit() async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential(account: "slow")
            let stamps = { () async throws -> (tenant: Int64, row: Int64) in
                try await fixture.pool.withConnection { connection in
                    let row = try connection.query(
                        "SELECT t.state_version AS tenant, c.changed_version AS row FROM tenants t JOIN credentials c ON c.tenant_id = t.id WHERE c.id = $1",
                        [.uuid(credential.id)]
                    ).rows[0]
                    return (try row.decode("tenant"), try row.decode("row"))
                }
            }
            let created = try await stamps()
            #expect(created.row == created.tenant)
            let before = try #require(try await fixture.state.tenantState(fixture.tenantID))
            // An update whose transaction stays open while a state is read, and commits after it.
            let updated = Mutex(false)
            let stateRead = Mutex(false)
            let update = Task {
                try await fixture.pool.withConnection { connection in
                    try connection.execute("BEGIN")
                    try connection.execute("UPDATE credentials SET label = 'late' WHERE id = $1", [.uuid(credential.id)])
                    updated.withLock { $0 = true }
                    let deadline = Date(timeIntervalSinceNow: 10)
                    while !stateRead.withLock({ $0 }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
                    try connection.execute("COMMIT")
                }
            }
            for _ in 0..<1000 where !updated.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
            guard updated.withLock({ $0 }) else {
                Issue.record("the update did not start: \(await update.result)")
                return
            }
            let meanwhile = try await fixture.state.tenantState(fixture.tenantID)
            stateRead.withLock { $0 = true }
            try await update.value
            #expect(meanwhile?.version == before.version)
            #expect(meanwhile?.credentials.credential(id: credential.id)?.label == nil)
            let after = try await stamps()
            #expect(after.row > before.version)
            #expect(after.tenant == after.row)
            let built = try #require(try await fixture.state.tenantState(fixture.tenantID, after: before))
            #expect(built.credentials.credential(id: credential.id)?.label == "late")
        }
    }

    /// A forSession credential concerns its session alone: the tenant's decisions keep their state.
    @Test func aSessionsOwnCredentialIsNoChangeOfTheTenants() async throws {
        try await StorageFixture.run { fixture in
            let session = try await fixture.session()
            let space = ProtectionSpace(host: "files.example.com", port: 443, protocolName: "https", realm: "Files", authenticationMethod: .httpBasic)
            let before = try #require(try await fixture.state.tenantState(fixture.tenantID)).version
            _ = try await fixture.credentials.submit(
                tenantID: fixture.tenantID, session: session, space: space, user: "typed", password: "p", domain: nil, persistence: .forSession
            )
            #expect(try #require(try await fixture.state.tenantState(fixture.tenantID)).version == before)
            // Its session ending deletes it.
            _ = try await fixture.sessions.invalidate(tenantID: fixture.tenantID, id: session.id, mode: .cancel)
            #expect(try #require(try await fixture.state.tenantState(fixture.tenantID)).version == before)
            let removals = try await fixture.pool.withConnection { try $0.query("SELECT count(*) AS n FROM credential_removals").rows[0].decode("n", as: Int64.self) }
            #expect(removals == 0)
        }
    }

    @Test func removalsAreSweptOnceADayOld() async throws {
        try await StorageFixture.run { fixture in
            for account in ["old", "new"] {
                let credential = try await fixture.credential(account: account)
                #expect(try await fixture.credentials.delete(tenantID: fixture.tenantID, id: credential.id, actor: "test"))
            }
            _ = try await fixture.pool.withConnection { connection in
                try connection.execute(
                    "UPDATE credential_removals SET removed_at = now() - interval '25 hours' WHERE changed_version = (SELECT min(changed_version) FROM credential_removals)"
                )
            }
            #expect(try await fixture.credentials.purgeRemovals(olderThan: 86_400) == 1)
            #expect(try await fixture.credentials.purgeRemovals(olderThan: 86_400) == 0)
        }
    }
}
