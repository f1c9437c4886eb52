import CountersignPostgres
import CountersignTestSupport
import Testing

/// Session settings applied to every new connection.
@Suite("Statement timeout and session settings")
struct StatementTimeoutTests {
    @Test("a statement running past statement_timeout is cancelled")
    func statementTimeout() async throws {
        try await Fixtures.withFreshPool(poolSize: 1, statementTimeout: .milliseconds(200)) { pool, _ in
            let clock = ContinuousClock()
            let start = clock.now
            let error = await Fixtures.expectPostgresError(.queryFailed) {
                _ = try await pool.withConnection { try $0.query("SELECT pg_sleep(3)") }
            }
            #expect(error?.isQueryCanceled == true)
            #expect(error?.sqlState == "57014")
            #expect(clock.now - start < .seconds(2))
            // The same connection carries on.
            #expect(pool.statistics.open == 1)
            let setting = try await pool.withConnection {
                try $0.query("SHOW statement_timeout").first!.decode(0, as: String.self)
            }
            #expect(setting == "200ms")
        }
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
