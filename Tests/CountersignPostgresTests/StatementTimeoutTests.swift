import CountersignPostgres
import CountersignTestSupport
import Foundation
import Testing

/// Session settings applied to every new connection.
@Suite("Statement timeout and session settings")
struct StatementTimeoutTests {
    @Test("a statement running past statement_timeout is cancelled")
    func statementTimeout() async throws {
        try await Fixtures.withFreshPool(poolSize: 1, statementTimeout: .milliseconds(200)) { pool, _ in
            // Connected first, so that the bound below is the statement's alone.
            try await pool.withConnection { _ = try $0.query("SELECT 1") }
            let clock = ContinuousClock()
            let start = clock.now
            let error = await Fixtures.expectPostgresError(.queryFailed) {
                _ = try await pool.withConnection { try $0.query("SELECT pg_sleep(30)") }
            }
            #expect(error?.isQueryCanceled == true)
            #expect(error?.sqlState == "57014")
            #expect(clock.now - start < .seconds(10))
            // The same connection carries on.
            #expect(pool.statistics.open == 1)
            let setting = try await pool.withConnection {
                try $0.query("SHOW statement_timeout").first!.decode(0, as: String.self)
            }
            #expect(setting == "200ms")
        }
    }

    /// A stopped backend (SIGSTOP) is a server that hangs: it never answers, and never enforces
    /// its statement timeout. A cluster of the test's own, so that no other test waits on it.
    @Test("a statement a hung server does not answer fails after the statement and connect timeouts, and its connection is replaced")
    func unansweredStatement() async throws {
        let cluster = try TestDatabase.privateCluster()
        let connectionString = try await cluster.start()
        var configuration = Fixtures.configuration(connectionString, poolSize: 1, statementTimeout: .seconds(1))
        configuration.connectTimeout = .seconds(1)
        let pool = PostgresPool(configuration: configuration, logger: Fixtures.logger)

        // A small statement waits for the answer; one with a parameter larger than the socket's
        // buffers waits to finish sending it.
        for parameter in ["small", String(repeating: "x", count: 16 << 20)] {
            let backend = try await Self.backendID(pool)
            kill(pid_t(backend), SIGSTOP)
            let started = ContinuousClock.now
            let error = await Fixtures.expectPostgresError(.connectionLost) {
                _ = try await pool.withConnection { try $0.query("SELECT length($1) AS n", [.text(parameter)]) }
            }
            let waited = ContinuousClock.now - started
            kill(pid_t(backend), SIGCONT)
            // The upper bound only tells "gave up" from "hung": a busy machine stretches the wait.
            #expect(waited >= .seconds(2) && waited < .seconds(30), "waited \(waited)")
            #expect(String(describing: error).contains("did not answer"), "\(String(describing: error))")
            #expect(pool.statistics.open == 0)
            #expect(try await Self.backendID(pool) != backend)
        }
        await pool.close()
        try await cluster.stop()
    }

    @Test("liftStatementTimeout lets one transaction wait past both timeouts, and only that one")
    func liftedForOneTransaction() async throws {
        let pool = PostgresPool(configuration: try await Self.secondTimeouts(), logger: Fixtures.logger)
        _ = try await Self.backendID(pool)
        let value = try await pool.withTransaction { connection in
            try connection.liftStatementTimeout()
            return try connection.query("SELECT pg_sleep(2.5), 7 AS v").first!.decode("v", as: Int.self)
        }
        #expect(value == 7)
        // The same connection, next lease: the server's timeout is back ...
        let canceled = await Fixtures.expectPostgresError(.queryFailed) {
            try await pool.withConnection { _ = try $0.query("SELECT pg_sleep(3)") }
        }
        #expect(canceled?.isQueryCanceled == true)
        // ... and so is the client's.
        let backend = try await Self.backendID(pool)
        _ = await Fixtures.expectPostgresError(.connectionLost) {
            try await pool.withConnection { connection in
                try connection.simpleQuery("SET statement_timeout = 0")
                _ = try connection.query("SELECT pg_sleep(60)")
            }
        }
        _ = try await Self.withConnectRetried(pool) { try $0.query("SELECT pg_terminate_backend($1::int)", [.int(Int64(backend))]) }
        await pool.close()
    }

    /// One connection with statement and connect timeouts of a second each.
    private static func secondTimeouts() async throws -> PostgresConfiguration {
        var configuration = Fixtures.configuration(try await TestDatabase.freshDatabase(), poolSize: 1, statementTimeout: .seconds(1))
        configuration.connectTimeout = .seconds(1)
        return configuration
    }

    /// The pid of the pool's backend, connecting if it must. These pools connect with a timeout of
    /// a second, there to make the client's deadline short; under the whole suite's load a connect
    /// can take longer, and is tried again.
    private static func backendID(_ pool: PostgresPool) async throws -> Int {
        try await withConnectRetried(pool) { try $0.query("SELECT pg_backend_pid() AS pid").first!.decode("pid", as: Int.self) }
    }

    private static func withConnectRetried<T: Sendable>(_ pool: PostgresPool, _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        for _ in 1..<5 {
            do {
                return try await pool.withConnection(body)
            } catch let error as PostgresError where error.code == .connectionFailed {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        return try await pool.withConnection(body)
    }

    @Test("a zero statementTimeout disables it")
    func disabled() async throws {
        try await Fixtures.withFreshPool(poolSize: 1, statementTimeout: .zero) { pool, _ in
            let setting = try await pool.withConnection {
                try $0.query("SHOW statement_timeout").first!.decode(0, as: String.self)
            }
            #expect(setting == "0")
        }
    }

    @Test("sessions use UTC, ISO dates, hex bytea and the application name")
    func sessionSettings() async throws {
        let name = Fixtures.uniqueName("settings")
        try await Fixtures.withFreshPool(poolSize: 1, applicationName: name) { pool, _ in
            let settings = try await pool.withConnection { connection in
                try connection.query(
                    """
                    SELECT current_setting('TimeZone') AS tz, current_setting('DateStyle') AS ds,
                           current_setting('bytea_output') AS bo, current_setting('application_name') AS app,
                           current_setting('client_encoding') AS enc
                    """
                ).first!
            }
            #expect(try settings.decode("tz", as: String.self) == "UTC")
            #expect(try settings.decode("ds", as: String.self) == "ISO, MDY")
            #expect(try settings.decode("bo", as: String.self) == "hex")
            #expect(try settings.decode("app", as: String.self) == name)
            #expect(try settings.decode("enc", as: String.self) == "UTF8")
        }
    }

    @Test("an application_name in the connection string wins over the configured one")
    func connectionStringWins() async throws {
        let connectionString = try await CountersignTestSupport.TestDatabase.freshDatabase()
        let pool = PostgresPool(
            configuration: Fixtures.configuration(connectionString + " application_name=from-string"),
            logger: Fixtures.logger
        )
        let name = try await pool.withConnection {
            try $0.query("SELECT current_setting('application_name') AS v").first!.decode("v", as: String.self)
        }
        await pool.close()
        #expect(name == "from-string")
    }
}
