import CountersignPostgres
import CountersignTestSupport
import Foundation
import Testing

@Suite("Closing the pool")
struct PoolClosingTests {
    /// Each statement gives up on a server that does not answer (`StatementTimeoutTests`), but a
    /// call of several statements, or one that lifted the timeout, can outlast that. A lifted call
    /// that sleeps stands for them.
    @Test("a call still out holds up closing no longer than the statement and connect timeouts")
    func anUnansweredCallIsLeftBehind() async throws {
        let connectionString = try await TestDatabase.freshDatabase()
        var configuration = Fixtures.configuration(connectionString, poolSize: 1, statementTimeout: .seconds(1))
        configuration.connectTimeout = .seconds(1)
        let pool = PostgresPool(configuration: configuration, logger: Fixtures.logger)
        let backend = try await pool.withConnection { try $0.query("SELECT pg_backend_pid() AS pid").first!.decode("pid", as: Int.self) }
        let unanswered = Task {
            try? await pool.withTransaction { connection in
                try connection.liftStatementTimeout()
                _ = try connection.query("SELECT pg_sleep(60)")
            }
        }
        #expect(await eventually { pool.statistics.inUse == 1 })

        let started = ContinuousClock.now
        await pool.close()
        #expect(ContinuousClock.now - started < .seconds(15))
        await #expect(throws: PostgresError.self) { try await pool.withConnection { _ = try $0.query("SELECT 1") } }

        // Ends the sleep, so that the call left behind comes back.
        let other = PostgresPool(configuration: Fixtures.configuration(connectionString, poolSize: 1), logger: Fixtures.logger)
        try await other.withConnection { _ = try $0.query("SELECT pg_cancel_backend($1::int)", [.int(Int64(backend))]) }
        await other.close()
        _ = await unanswered.value
    }

    /// `.zero` means no statement timeout and a connect that waits for ever
    /// (`PostgresConfiguration`): nothing then bounds a call, so closing is no reason to leave a
    /// call that is still working behind.
    @Test("without statement and connect timeouts, closing waits for the calls still out")
    func withoutTimeoutsClosingWaits() async throws {
        let connectionString = try await TestDatabase.freshDatabase()
        var configuration = Fixtures.configuration(connectionString, poolSize: 1, statementTimeout: .zero)
        configuration.connectTimeout = .zero
        let pool = PostgresPool(configuration: configuration, logger: Fixtures.logger)
        // The call waits for an advisory lock this gate holds for a second after the close begins.
        let gate = PostgresPool(configuration: Fixtures.configuration(connectionString, poolSize: 1), logger: Fixtures.logger)
        try await gate.withConnection { try $0.simpleQuery("SELECT pg_advisory_lock(4712)") }
        let inFlight = Task {
            try await pool.withConnection { try $0.query("SELECT pg_advisory_lock(4712), 42 AS v").first!.decode("v", as: Int.self) }
        }
        #expect(await eventually { pool.statistics.inUse == 1 })
        let unlock = Task {
            try await Task.sleep(for: .seconds(1))
            try await gate.withConnection { try $0.simpleQuery("SELECT pg_advisory_unlock(4712)") }
        }
        await pool.close()
        // The call came back before the close ended, and its connection was closed with the rest.
        #expect(pool.statistics.open == 0 && pool.statistics.inUse == 0, "\(pool.statistics)")
        #expect(try await inFlight.value == 42)
        try await unlock.value
        await gate.close()
    }
}
