import CountersignCore
@testable import CountersignHTTP
import CountersignPostgres
import CountersignTestSupport
import Logging
import Testing

@Suite("Readiness under load", .timeLimit(.minutes(2)))
struct ReadinessLoadTests {
    static func pool(_ database: String) -> PostgresPool {
        PostgresPool(
            configuration: PostgresConfiguration(
                connectionString: database, poolSize: 1, acquireTimeout: .seconds(30), connectTimeout: .seconds(5), statementTimeout: .seconds(20)
            )
        )
    }

    static func readiness(_ pool: PostgresPool, timeout: Duration = .seconds(2)) -> Readiness {
        Readiness(
            pool: pool, expectedSchemaVersion: 0, cacheTTL: .zero, hasMasterKey: false, logger: Logger(label: "countersign.test.readiness"),
            timeout: timeout, masterKeyMatchesDatabase: { nil }
        )
    }

    /// Callers queue for the pool's one connection while its calls keep ending: the instance is
    /// busy, and stays ready (unready, every instance of an overloaded fleet would leave its load
    /// balancer at once). A call that holds the connection unanswered for longer than the probe
    /// waits is what a database that hangs looks like: not ready.
    @Test func aBusyPoolIsReadyAndAStuckOneIsNot() async throws {
        let database = try await TestDatabase.freshDatabase()
        let pool = Self.pool(database)
        let readiness = Self.readiness(pool)
        try await readiness.check()

        // Four callers taking turns with 0.8 s calls: a probe waits behind about three of them.
        let busy = (0..<4).map { _ in
            Task { for _ in 0..<2 { try await pool.withConnection { try $0.simpleQuery("SELECT pg_sleep(0.8)") } } }
        }
        #expect(await eventually { pool.statistics.waiters >= 3 })
        try await readiness.check()
        for task in busy { try await task.value }

        let stuck = try await OccupiedConnection(pool, database: database)
        // Nothing has ended since the last call did, more than the probe's wait before it gives up.
        await #expect(throws: CountersignError.self) { try await readiness.check() }
        try await stuck.release()
        try await readiness.check()
        await pool.close()
    }

    /// Probes share one check of the database. The first probe to give up on it leaves it running
    /// for the others, which each wait their own time: cancelled then, a probe that came later was
    /// told unready at the first probe's deadline, though the database answered within its own.
    @Test func aProbeThatGivesUpLeavesTheSharedCheckToLaterOnes() async throws {
        let database = try await TestDatabase.freshDatabase()
        let pool = Self.pool(database)
        let readiness = Self.readiness(pool, timeout: .seconds(6))
        let stuck = try await OccupiedConnection(pool, database: database)
        let first = Task { try await readiness.check() }
        // The shared check waits for the connection; a later probe joins it well before the
        // first gives up (6 s), and its own time runs 2 s longer.
        #expect(await eventually { pool.statistics.waiters == 1 })
        try await Task.sleep(for: .seconds(2))
        let later = Task { try await readiness.check() }
        await #expect(throws: CountersignError.self) { try await first.value }
        try await stuck.release()
        try await later.value
        await pool.close()
    }
}
