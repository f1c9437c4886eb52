import CountersignCore
import CountersignCrypto
import CountersignPostgres
import CountersignStorage
import Foundation
import Synchronization
import Testing

@Suite("Decision storage")
struct DecisionStorageTests {
    @Test func concurrentRejectionsCountExactlyAndBlockOnce() async throws {
        try await StorageFixture.run(poolSize: 8) { fixture in
            let credential = try await fixture.credential()
            let writer = DecisionWriter(pool: fixture.pool, logger: StorageFixture.logger)
            let decisionsStore = fixture.decisions
            let tenantID = fixture.tenantID
            var records: [DecisionRecord] = []
            for client in 0..<10 {
                let session = try await fixture.session(clientID: "client-\(client)")
                for _ in 0..<10 { records.append(try await fixture.releaseRecord(credential, session: session, maxFailures: 30)) }
            }
            // Group commit: all at once.
            let commits = try await withThrowingTaskGroup(of: DecisionCommit.self) { group in
                for record in records { group.addTask { try await writer.record(record) } }
                return try await group.reduce(into: [DecisionCommit]()) { $0.append($1) }
            }
            #expect(commits.allSatisfy { $0 == .recorded(failures: 0) })

            let results = try await withThrowingTaskGroup(of: DecisionStore.OutcomeResult?.self) { group in
                for record in records {
                    group.addTask {
                        try await decisionsStore.reportOutcome(tenantID: tenantID, decisionID: record.id, outcome: .rejected, upstreamStatus: 401, source: "report")
                    }
                }
                return try await group.reduce(into: [DecisionStore.OutcomeResult]()) { if let result = $1 { $0.append(result) } }
            }
            #expect(results.count == 100)
            #expect(results.allSatisfy { $0.counted })
            #expect(Set(results.compactMap { $0.counter?.failures }) == Set(1...100))
            // The reports after the 30th see the block; the 30th set it; none before.
            #expect(results.filter { ($0.counter?.failures ?? 0) < 30 }.allSatisfy { $0.counter?.blockedUntil == nil })
            #expect(results.filter { ($0.counter?.failures ?? 0) >= 30 }.allSatisfy { $0.counter?.blockedUntil != nil })
            // Only the block changes what the tenant's cached state holds.
            #expect(results.filter { ($0.counter?.failures ?? 0) < 30 }.allSatisfy { !$0.tenantStateChanged })
            #expect(results.filter { ($0.counter?.failures ?? 0) >= 30 }.allSatisfy { $0.tenantStateChanged })

            let counters = try await CounterStore(pool: fixture.pool).list(tenantID: tenantID).entries
            #expect(counters.count == 1)
            #expect(counters.first?.totalRejections == 100)
            #expect(counters.first?.blocks == 1)
            #expect(counters.first?.clients.count == 10)
            let history = try #require(try await fixture.credentials.history(tenantID: tenantID, id: credential.id))
            let blocked = history.entries.filter { $0.event == "blocked" }
            #expect(blocked.count == 1)
            #expect(blocked.first?.details["failures"] == "30")
            #expect(try await fixture.state.tenantState(tenantID)?.blockedUntil[credential.id] != nil)
        }
    }

    /// An admin's change of the secret and a late rejection of the old one, at the same time:
    /// the rejection must not count against the new secret, whichever commits first.
    @Test func aRejectionOverlappingASecretChangeDoesNotCountAgainstTheNewSecret() async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential()
            let writer = DecisionWriter(pool: fixture.pool, logger: StorageFixture.logger)
            let session = try await fixture.session()
            let old = try await fixture.releaseRecord(credential, session: session, maxFailures: 5)
            #expect(try await writer.record(old) == .recorded(failures: 0))

            // The tenant row held elsewhere keeps the admin's change open: it has locked the
            // credential and replaced its secret, and waits to bump the tenant's version.
            let holding = Flag()
            let release = DispatchSemaphore(value: 0)
            let tenantID = fixture.tenantID
            let holder = Task {
                try await fixture.pool.withTransaction { connection in
                    try connection.execute("SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE", [.uuid(tenantID)])
                    holding.set()
                    release.wait()
                }
            }
            defer { release.signal() }
            try await Self.waitUntil { holding.isSet }
            let credentials = fixture.credentials
            let change = Task { try await credentials.update(tenantID: tenantID, id: credential.id, .init(password: "changed"), actor: "admin") }
            try await Self.waitUntil { try await Self.lockWaiters(fixture.pool) >= 1 }

            let reported = Flag()
            let decisions = fixture.decisions
            let report = Task {
                defer { reported.set() }
                return try await decisions.reportOutcome(tenantID: tenantID, decisionID: old.id, outcome: .rejected, upstreamStatus: 401, source: "report")
            }
            // Either the report waits for the change, or it is done.
            try await Self.waitUntil {
                if reported.isSet { return true }
                return try await Self.lockWaiters(fixture.pool) >= 2
            }
            release.signal()
            try await holder.value
            #expect(try await change.value != nil)
            let result = try #require(try await report.value)
            #expect(!result.counted)
            #expect(result.decision.outcome == .rejected)
            let counters = try await CounterStore(pool: fixture.pool).list(tenantID: tenantID).entries
            #expect(counters.allSatisfy { $0.failures == 0 }, "\(counters)")
        }
    }

    /// An admin deleting a credential a session remembers, while that session records a decision
    /// that remembers the same space: the recorder holds the session and then the tenant while it
    /// adds to the session's memory; the deletion must wait for the session rather than hold the
    /// memory row and wait for the tenant (a deadlock, one side failing).
    @Test func deletingARememberedCredentialWhileTheSessionRecordsDoesNotDeadlock() async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential()
            let writer = DecisionWriter(pool: fixture.pool, logger: StorageFixture.logger)
            let session = try await fixture.session()
            let remembered = try await fixture.releaseRecord(credential, session: session, maxFailures: 5, remember: true)
            #expect(try await writer.record(remembered) == .recorded(failures: 0))

            // The recorder's locks, in its order (migrations/0012: sessions, then the tenant), then
            // its insert into the session's memory once the deletion is under way.
            let locked = Flag()
            let proceed = DispatchSemaphore(value: 0)
            let (tenantID, sessionID) = (fixture.tenantID, session.id)
            let recorder = Task {
                try await fixture.pool.withTransaction { connection in
                    try connection.execute("SELECT 1 FROM sessions WHERE id = $1 FOR NO KEY UPDATE", [.uuid(sessionID)])
                    try connection.execute("SELECT 1 FROM tenants WHERE id = $1 FOR SHARE", [.uuid(tenantID)])
                    locked.set()
                    proceed.wait()
                    try connection.execute(
                        """
                        INSERT INTO session_memory (session_id, space_key, disposition, credential_id, persistence)
                        VALUES ($1, $2, 'useCredential', $3, 'forSession') ON CONFLICT (session_id, space_key) DO NOTHING
                        """,
                        [.uuid(sessionID), .text(remembered.spaceKey), .uuid(credential.id)]
                    )
                }
            }
            try await Self.waitUntil { locked.isSet }
            let credentials = fixture.credentials
            let deletion = Task { try await credentials.delete(tenantID: tenantID, id: credential.id, actor: "admin") }
            try await Self.waitUntil { try await Self.lockWaiters(fixture.pool) >= 1 }
            proceed.signal()
            try await recorder.value
            #expect(try await deletion.value)
            #expect(try await fixture.credentials.get(tenantID: tenantID, id: credential.id) == nil)
        }
    }

    /// Polls `condition` for up to four seconds.
    static func waitUntil(_ condition: () async throws -> Bool) async throws {
        for _ in 0..<400 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("gave up waiting")
    }

    /// How many backends of this database wait for a lock.
    static func lockWaiters(_ pool: PostgresPool) async throws -> Int {
        try await pool.withConnection { connection in
            try connection.query(
                "SELECT count(*)::int8 AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).rows[0].decode("n", as: Int.self)
        }
    }

    /// Windows account names compare case-insensitively across Unicode, which PostgreSQL's
    /// `lower()` does not under the C locale, in whichever form the credential holds them; and a
    /// retry rejects only the release just made, however many the session holds.
    @Test func aHandshakeRetryNamesTheReleasedWindowsAccountInAnyCaseAndForm() async throws {
        try await StorageFixture.run(poolSize: 4) { fixture in
            let writer = DecisionWriter(pool: fixture.pool, logger: StorageFixture.logger)
            let space = ProtectionSpace(host: "intranet.example.com", port: 443, protocolName: "https", realm: nil, authenticationMethod: .ntlm)
            func release(_ credential: Credential, in session: Session) async throws -> UUID {
                let record = try await fixture.releaseRecord(credential, session: session, maxFailures: 5, space: space)
                #expect(try await writer.record(record) == .recorded(failures: 0))
                return record.id
            }
            func retry(_ user: DecisionStore.RetryUser, in session: Session) async throws -> UUID? {
                try await fixture.decisions.lastRelease(
                    sessionID: session.id,
                    retry: .init(taskID: "another-task", failureCount: 1, ofAnyTask: true, spaceKey: space.key, user: user, upstreamStatus: 401)
                )?.id
            }

            let session = try await fixture.session()
            let first = try await release(try await fixture.credential(account: "jürgen"), in: session)
            #expect(try await retry(.windowsAccount("CORP\\JÜRGEN"), in: session) == first)
            #expect(try await retry(.windowsAccount("Jürgen@corp.example.com"), in: session) == first)
            #expect(try await retry(.windowsAccount("jurgen"), in: session) == nil)
            #expect(try await retry(.exact("JÜRGEN"), in: session) == nil)
            #expect(try await retry(.exact("jürgen"), in: session) == first)

            // The account may hold its domain in its name.
            let withDomain = try await fixture.session()
            let svc = try await release(try await fixture.credential(account: "CORP\\svc"), in: withDomain)
            for name in ["corp\\SVC", "svc", "svc@corp.example.com", "CORP\\svc"] {
                #expect(try await retry(.windowsAccount(name), in: withDomain) == svc, "\(name)")
            }
            #expect(try await retry(.windowsAccount("OTHER\\svc"), in: withDomain) == nil)

            // A newer release of another account is the one a retry of the session would reject.
            _ = try await release(try await fixture.credential(account: "someone"), in: session)
            #expect(try await retry(.windowsAccount("jürgen"), in: session) == nil)
        }
    }

    @Test func aDecisionMadeFromOldStateIsStale() async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential()
            let writer = DecisionWriter(pool: fixture.pool, logger: StorageFixture.logger)
            let session = try await fixture.session()
            let record = try await fixture.releaseRecord(credential, session: session, maxFailures: 3)
            // The credential changes (the tenant's state version moves on).
            _ = try await fixture.credential(password: "rotated")
            #expect(try await writer.record(record) == .stale)

            let fresh = try await fixture.releaseRecord(credential, session: session, maxFailures: 3)
            _ = try await fixture.sessions.invalidate(tenantID: fixture.tenantID, id: session.id, mode: .finishTasks)
            #expect(try await writer.record(fresh) == .sessionEnded)
            #expect(try await fixture.decisions.get(tenantID: fixture.tenantID, id: fresh.id) == nil)
        }
    }

    /// A rejection that does not block moves no state version; a decision made from the
    /// credential's failure count (a security-check answer) must still see it.
    @Test func aDecisionExpectingFailuresIsStaleOnceAnotherRejectionCounted() async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential()
            let writer = DecisionWriter(pool: fixture.pool, logger: StorageFixture.logger)
            let session = try await fixture.session()
            let rejected = try await fixture.releaseRecord(credential, session: session, maxFailures: 5)
            #expect(try await writer.record(rejected) == .recorded(failures: 0))

            var expecting = try await fixture.releaseRecord(credential, session: session, maxFailures: 5)
            expecting.expectedFailures = 0
            _ = try await fixture.decisions.reportOutcome(tenantID: fixture.tenantID, decisionID: rejected.id, outcome: .rejected, upstreamStatus: 401, source: "report")
            #expect(try await writer.record(expecting) == .stale)
            #expect(try await fixture.decisions.get(tenantID: fixture.tenantID, id: expecting.id) == nil)

            var current = try await fixture.releaseRecord(credential, session: session, maxFailures: 5)
            current.expectedFailures = 1
            #expect(try await writer.record(current) == .recorded(failures: 1))
        }
    }

    @Test func aDecisionThatAskedThePolicyIsStaleOnceTheSessionRememberedItsSpace() async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential()
            let writer = DecisionWriter(pool: fixture.pool, logger: StorageFixture.logger)
            let session = try await fixture.session()
            var other = StorageFixture.space
            other.realm = "Other"
            let first = try await fixture.releaseRecord(credential, session: session, maxFailures: 3, remember: true)
            let sameSpace = try await fixture.releaseRecord(credential, session: session, maxFailures: 3, remember: true)
            let otherSpace = try await fixture.releaseRecord(credential, session: session, maxFailures: 3, space: other, remember: true)
            #expect(try await writer.record(first) == .recorded(failures: 0))
            // Made before the memory existed: it must be decided again, from the memory.
            #expect(try await writer.record(sameSpace) == .stale)
            // Another space of the session is not disturbed by it.
            #expect(try await writer.record(otherSpace) == .recorded(failures: 0))
            let memory = try #require(try await fixture.state.sessionState(tenantID: fixture.tenantID, sessionID: session.id)).memory
            #expect(Set(memory.keys) == [StorageFixture.space.key, other.key])
            #expect(memory[StorageFixture.space.key]?.credentialID == credential.id)
        }
    }

    @Test func retentionDeletesOnlyDecisionsOlderThanTheCutoff() async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential()
            let writer = DecisionWriter(pool: fixture.pool, logger: StorageFixture.logger)
            let session = try await fixture.session()
            var records: [DecisionRecord] = []
            for _ in 0..<12 {
                let record = try await fixture.releaseRecord(credential, session: session, maxFailures: 3)
                #expect(try await writer.record(record) == .recorded(failures: 0))
                records.append(record)
            }
            // Eight of them 100 days old, then more than one chunk of those per sweep.
            let old = records.prefix(8).map(\.id.text)
            _ = try await fixture.pool.withConnection { connection in
                try connection.execute("UPDATE decisions SET created_at = now() - interval '100 days' WHERE id = ANY($1::uuid[])", [.textArray(old)])
            }
            let cutoff = Date(timeIntervalSinceNow: -90 * 86_400)
            #expect(try await fixture.decisions.purge(madeBefore: cutoff, limit: 5) == 5)
            #expect(try await fixture.decisions.purge(madeBefore: cutoff, limit: 5) == 3)
            #expect(try await fixture.decisions.purge(madeBefore: cutoff, limit: 5) == 0)
            for (index, record) in records.enumerated() {
                #expect((try await fixture.decisions.get(tenantID: fixture.tenantID, id: record.id) == nil) == (index < 8))
            }
        }
    }

    @Test func retentionDeletesOnlySessionsThatEndedBeforeTheCutoff() async throws {
        try await StorageFixture.run { fixture in
            let credential = try await fixture.credential()
            let writer = DecisionWriter(pool: fixture.pool, logger: StorageFixture.logger)
            let live = try await fixture.session()
            let endedLongAgo = try await fixture.session()
            let endedRecently = try await fixture.session()
            let decision = try await fixture.releaseRecord(credential, session: endedLongAgo, maxFailures: 3)
            #expect(try await writer.record(decision) == .recorded(failures: 0))
            for session in [endedLongAgo, endedRecently] {
                _ = try await fixture.sessions.invalidate(tenantID: fixture.tenantID, id: session.id, mode: .finishTasks)
            }
            _ = try await fixture.pool.withConnection { connection in
                try connection.execute("UPDATE sessions SET invalidated_at = now() - interval '100 days' WHERE id = $1", [.uuid(endedLongAgo.id)])
            }
            #expect(try await fixture.sessions.purge(endedBefore: Date(timeIntervalSinceNow: -90 * 86_400)) == 1)
            #expect(try await fixture.sessions.get(tenantID: fixture.tenantID, id: endedLongAgo.id) == nil)
            #expect(try await fixture.sessions.get(tenantID: fixture.tenantID, id: endedRecently.id) != nil)
            #expect(try await fixture.sessions.get(tenantID: fixture.tenantID, id: live.id)?.invalidatedAt == nil)
            // Its decisions stay for as long as decisions do.
            #expect(try await fixture.decisions.get(tenantID: fixture.tenantID, id: decision.id) != nil)
        }
    }

    @Test func concurrentSweepersExpireEachSessionOnce() async throws {
        try await StorageFixture.run { fixture in
            for _ in 0..<30 { _ = try await fixture.session(ttlSeconds: 1) }
            let live = try await fixture.session(ttlSeconds: 3600)
            try await Task.sleep(for: .milliseconds(1100))
            let sessions = fixture.sessions
            let expired = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try await sessions.expireDue(limit: 7) + sessions.expireDue(limit: 7) + sessions.expireDue(limit: 7) } }
                return try await group.reduce(0, +)
            }
            #expect(expired + (try await sessions.expireDue()) == 30)
            #expect(try await sessions.get(tenantID: fixture.tenantID, id: live.id)?.invalidatedAt == nil)
        }
    }
}

/// A flag set by one task and read by another.
final class Flag: Sendable {
    private let state = Mutex(false)

    var isSet: Bool { state.withLock { $0 } }

    func set() { state.withLock { $0 = true } }
}

@Suite("Secrets vault")
struct SecretVaultTests {
    @Test func oneDataKeyPerTenantEvenWhenInstancesRace() async throws {
        try await StorageFixture.run { fixture in
            let vaults = (0..<6).map { _ in SecretVault(masterKey: fixture.masterKey, pool: fixture.pool) }
            let sealed = try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for vault in vaults {
                    group.addTask { try await vault.key(for: fixture.tenantID).seal(Array("same".utf8), rowID: fixture.tenantID) }
                }
                return try await group.reduce(into: [[UInt8]]()) { $0.append($1) }
            }
            // Every instance opens what every other sealed: they share one key.
            for vault in vaults {
                let key = try await vault.key(for: fixture.tenantID)
                for bytes in sealed { #expect(try key.open(bytes, rowID: fixture.tenantID) == Array("same".utf8)) }
            }
            let count = try await fixture.pool.withConnection { try $0.query("SELECT count(*)::int8 AS n FROM tenant_data_keys").rows[0].decode("n", as: Int.self) }
            #expect(count == 1)
        }
    }

    @Test func aSealBindsRowAndTenant() async throws {
        try await StorageFixture.run { fixture in
            let key = try await fixture.vault.key(for: fixture.tenantID)
            let row = UUID()
            let sealed = try key.seal(Array("pw".utf8), rowID: row)
            #expect(try key.open(sealed, rowID: row) == Array("pw".utf8))
            #expect(throws: CountersignError(.secretUnreadable, "")) { try key.open(sealed, rowID: UUID()) }
            let other = try await TenantStore(pool: fixture.pool).create(name: "other")
            let otherKey = try await fixture.vault.key(for: other.id)
            #expect(throws: CountersignError(.secretUnreadable, "")) { try otherKey.open(sealed, rowID: row) }
            var tampered = sealed
            tampered[tampered.count / 2] ^= 1
            #expect(throws: CountersignError(.secretUnreadable, "")) { try key.open(tampered, rowID: row) }
        }
    }

    @Test func anotherMasterKeyOpensNothing() async throws {
        try await StorageFixture.run { fixture in
            _ = try await fixture.vault.key(for: fixture.tenantID)
            let stranger = SecretVault(masterKey: try SymmetricKey.random(), pool: fixture.pool)
            // Not the database's key (such an instance does not start; this one was left behind by a rotation).
            await #expect(throws: CountersignError(.masterKeyUnavailable, "")) { try await stranger.key(for: fixture.tenantID) }
            let keyless = SecretVault(masterKey: nil, pool: fixture.pool)
            await #expect(throws: CountersignError(.masterKeyUnavailable, "")) { try await keyless.key(for: fixture.tenantID) }
        }
    }
}
