import CountersignPostgres
import CountersignTestSupport
import Logging
import ServiceLifecycle
import Testing

/// The pool as a ServiceLifecycle service.
@Suite("Pool as a service")
struct ServiceLifecycleTests {
    private func makePool(applicationName: String = "countersign-tests", poolSize: Int = 2) async throws -> PostgresPool {
        PostgresPool(
            configuration: Fixtures.configuration(
                try await TestDatabase.freshDatabase(),
                poolSize: poolSize,
                applicationName: applicationName
            ),
            logger: Fixtures.logger
        )
    }

    @Test("graceful shutdown of the ServiceGroup closes the pool and its connections")
    func gracefulShutdown() async throws {
        let name = Fixtures.uniqueName("lifecycle")
        let connectionString = try await TestDatabase.freshDatabase()
        let pool = PostgresPool(
            configuration: Fixtures.configuration(connectionString, poolSize: 2, applicationName: name),
            logger: Fixtures.logger
        )
        let observer = PostgresPool(configuration: Fixtures.configuration(connectionString, poolSize: 1), logger: Fixtures.logger)
        func sessions() async throws -> Int {
            try await observer.withConnection { connection in
                try connection.query("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1", [.text(name)])
                    .first!.decode("n", as: Int.self)
            }
        }

        // Usable before the group runs, e.g. for migrations.
        #expect(try await pool.withConnection { _ in 1 } == 1)

        let group = ServiceGroup(services: [pool], logger: Fixtures.logger)
        let running = Task { try await group.run() }
        #expect(try await pool.withConnection { _ in 2 } == 2)
        #expect(pool.statistics.open == 1)
        #expect(try await sessions() == 1)

        await group.triggerGracefulShutdown()
        try await running.value

        await Fixtures.expectPostgresError(.poolClosed) {
            _ = try await pool.withConnection { _ in 3 }
        }
        #expect(pool.statistics.open == 0)
        #expect(try await eventually { try await sessions() == 0 })
        await observer.close()
    }

    @Test("cancelling run() closes the pool")
    func cancellation() async throws {
        let pool = try await makePool()
        let running = Task { try await pool.run() }
        #expect(try await pool.withConnection { _ in 1 } == 1)
        running.cancel()
        try await running.value
        await Fixtures.expectPostgresError(.poolClosed) {
            _ = try await pool.withConnection { _ in 2 }
        }
    }

    @Test("work in flight at shutdown finishes; waiters fail with pool_closed")
    func inFlightWork() async throws {
        let connectionString = try await TestDatabase.freshDatabase()
        let pool = PostgresPool(configuration: Fixtures.configuration(connectionString, poolSize: 1), logger: Fixtures.logger)
        // The work in flight waits for an advisory lock this gate holds, so it is still running
        // when the shutdown arrives however slow the machine is.
        let gate = PostgresPool(configuration: Fixtures.configuration(connectionString, poolSize: 1), logger: Fixtures.logger)
        try await gate.withConnection { try $0.simpleQuery("SELECT pg_advisory_lock(4711)") }
        let group = ServiceGroup(services: [pool], logger: Fixtures.logger)
        let running = Task { try await group.run() }

        let inFlight = Task {
            try await pool.withConnection { connection in
                try connection.query("SELECT pg_advisory_lock(4711), 42 AS v").first!.decode("v", as: Int.self)
            }
        }
        #expect(await eventually { pool.statistics.inUse == 1 })
        let waiter = Task { try await pool.withConnection { _ in 0 } }
        #expect(await eventually { pool.statistics.waiters == 1 })

        await group.triggerGracefulShutdown()
        await Fixtures.expectPostgresError(.poolClosed) { _ = try await waiter.value }
        try await gate.withConnection { try $0.simpleQuery("SELECT pg_advisory_unlock(4711)") }
        #expect(try await inFlight.value == 42)
        try await running.value
        #expect(pool.statistics.open == 0)
        await gate.close()
    }

    @Test("close() is idempotent and safe from several tasks")
    func closeTwice() async throws {
        let pool = try await makePool()
        _ = try await pool.withConnection { _ in 1 }
        async let a: Void = pool.close()
        async let b: Void = pool.close()
        _ = await (a, b)
        await pool.close()
        #expect(pool.statistics.open == 0)
    }
}
