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
}
