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
}
