import CountersignPostgres
import CountersignTestSupport
import Foundation
import Testing

@Suite("Closing the pool")
struct PoolClosingTests {
    @Test("a call the database never answers holds up closing no longer than the statement and connect timeouts")
    func aHungCallIsLeftBehind() async throws {
        let connectionString = try await TestDatabase.freshDatabase()
        var configuration = Fixtures.configuration(connectionString, poolSize: 1, statementTimeout: .seconds(1))
        configuration.connectTimeout = .seconds(1)
        let pool = PostgresPool(configuration: configuration, logger: Fixtures.logger)
        let backend = pid_t(try await pool.withConnection { try $0.query("SELECT pg_backend_pid() AS pid").first!.decode("pid", as: Int.self) })
        // The server hangs rather than fails: its statement timeout never fires.
        kill(backend, SIGSTOP)
        // Let the backend go again whatever happens, so that the cluster can stop; without the
        // bound, this is what would end the close.
        let release = Task {
            try? await Task.sleep(for: .seconds(20))
            kill(backend, SIGCONT)
        }
        defer {
            release.cancel()
            kill(backend, SIGCONT)
        }
        let hung = Task { try? await pool.withConnection { _ = try $0.query("SELECT 1") } }
        try await Task.sleep(for: .milliseconds(500))

        let started = ContinuousClock.now
        await pool.close()
        #expect(ContinuousClock.now - started < .seconds(15))
        await #expect(throws: PostgresError.self) { try await pool.withConnection { _ = try $0.query("SELECT 1") } }
        kill(backend, SIGCONT)
        _ = await hung.value
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
        #expect(await Fixtures.eventually { pool.statistics.inUse == 1 })
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
