import CountersignPostgres
import CountersignTestSupport
import Foundation
import Testing

/// The service starts while the database is down, reports it, and recovers without restart.
@Suite("Database outages")
struct DatabaseRecoveryTests {
    @Test("calls fail fast with connection_failed while the database is down, then recover")
    func startWhileDown() async throws {
        let cluster = try TestDatabase.privateCluster()
        let connectionString = try await cluster.start()
        try await cluster.stop()
        #expect(!cluster.isRunning)

        // Created while the database is down: no error until a call needs a connection.
        let pool = PostgresPool(
            configuration: Fixtures.configuration(connectionString, poolSize: 2),
            logger: Fixtures.logger
        )
        let clock = ContinuousClock()
        let start = clock.now
        let error = await Fixtures.expectPostgresError(.connectionFailed) {
            _ = try await pool.withConnection { try $0.query("SELECT 1") }
        }
        #expect(clock.now - start < .seconds(2), "failed after \(clock.now - start)")
        #expect(error?.description == "PostgresError(code: connection_failed)")
        #expect(pool.statistics.open == 0)
        #expect(pool.statistics.inUse == 0)

        // Many callers at once: all fail, none hang.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    await Fixtures.expectPostgresError(.connectionFailed) {
                        _ = try await pool.withConnection { try $0.query("SELECT 1") }
                    }
                }
            }
            try await group.waitForAll()
        }

        _ = try await cluster.start()
        let one = try await pool.withConnection { try $0.query("SELECT 1 AS v").first!.decode("v", as: Int.self) }
        #expect(one == 1)
        #expect(pool.statistics.open == 1)

        await pool.close()
        try await cluster.stop()
    }

    @Test("idle connections survive a server restart: the next call reconnects")
    func serverRestart() async throws {
        let cluster = try TestDatabase.privateCluster()
        let connectionString = try await cluster.start()
        let pool = PostgresPool(configuration: Fixtures.configuration(connectionString, poolSize: 2), logger: Fixtures.logger)

        let before = try await pool.withConnection { try $0.query("SELECT pg_backend_pid() AS pid").first!.decode("pid", as: Int.self) }
        try await TestDatabase.onOwnThread {
            try cluster.stop()
            _ = try cluster.start()
        }
        let after = try await pool.withConnection { try $0.query("SELECT pg_backend_pid() AS pid").first!.decode("pid", as: Int.self) }
        #expect(after != before)

        // A call running while the server goes away gets connection_lost.
        let running = Task {
            try await pool.withConnection { try $0.query("SELECT pg_sleep(5)") }
        }
        #expect(await eventually { pool.statistics.inUse == 1 })
        try await Task.sleep(for: .milliseconds(100))
        try await cluster.stop()
        let lost = await Fixtures.expectPostgresError(.connectionLost) { _ = try await running.value }
        #expect(lost != nil)
        await Fixtures.expectPostgresError(.connectionFailed) {
            _ = try await pool.withConnection { try $0.query("SELECT 1") }
        }

        await pool.close()
    }
}
