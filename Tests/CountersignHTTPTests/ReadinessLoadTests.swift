import CountersignCore
@testable import CountersignHTTP
import CountersignPostgres
import CountersignTestSupport
import Logging
import Testing

@Suite("Readiness under load")
struct ReadinessLoadTests {
    /// Callers queue for the pool's one connection while its calls keep ending: the instance is
    /// busy, and stays ready (unready, every instance of an overloaded fleet would leave its load
    /// balancer at once). A call that holds the connection unanswered for longer than the probe
    /// waits is what a database that hangs looks like: not ready.
    @Test func aBusyPoolIsReadyAndAStuckOneIsNot() async throws {
        let database = try await TestDatabase.freshDatabase()
        let pool = PostgresPool(
            configuration: PostgresConfiguration(
                connectionString: database, poolSize: 1, acquireTimeout: .seconds(30), connectTimeout: .seconds(5), statementTimeout: .seconds(20)
            )
        )
        let readiness = Readiness(
            pool: pool, expectedSchemaVersion: 0, cacheTTL: .zero, hasMasterKey: false, logger: Logger(label: "countersign.test.readiness"),
            masterKeyMatchesDatabase: { nil }
        )
        try await readiness.check()

        // Four callers taking turns with 0.8 s calls: a probe waits behind about three of them.
        let busy = (0..<4).map { _ in
            Task { for _ in 0..<2 { try await pool.withConnection { try $0.simpleQuery("SELECT pg_sleep(0.8)") } } }
        }
        while pool.statistics.waiters < 3 { try await Task.sleep(for: .milliseconds(10)) }
        try await readiness.check()
        for task in busy { try await task.value }

        let stuck = Task { try await pool.withConnection { try $0.simpleQuery("SELECT pg_sleep(3.5)") } }
        while pool.statistics.inUse == 0 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(200))
        await #expect(throws: CountersignError.self) { try await readiness.check() }
        try await stuck.value
        await pool.close()
    }

    /// Probes share one check of the database. The first probe to give up on it leaves it running
    /// for the others, which each wait their own time: cancelled then, a probe that came later was
    /// told unready at the first probe's deadline, though the database answered within its own.
    @Test func aProbeThatGivesUpLeavesTheSharedCheckToLaterOnes() async throws {
        let database = try await TestDatabase.freshDatabase()
        let pool = PostgresPool(
            configuration: PostgresConfiguration(
                connectionString: database, poolSize: 1, acquireTimeout: .seconds(30), connectTimeout: .seconds(5), statementTimeout: .seconds(20)
            )
        )
        let readiness = Readiness(
            pool: pool, expectedSchemaVersion: 0, cacheTTL: .zero, hasMasterKey: false, logger: Logger(label: "countersign.test.readiness"),
            masterKeyMatchesDatabase: { nil }
        )
        let stuck = Task { try await pool.withConnection { try $0.simpleQuery("SELECT pg_sleep(3)") } }
        while pool.statistics.inUse == 0 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(200))
        // Gives up about 1 s before the database answers again.
        let first = Task { try await readiness.check() }
        try await Task.sleep(for: .milliseconds(1500))
        // Waits until about 0.7 s after it answers.
        let later = Task { try await readiness.check() }
        await #expect(throws: CountersignError.self) { try await first.value }
        try await later.value
        try await stuck.value
        await pool.close()
    }
}
