import CountersignPostgres
import CountersignTestSupport
import Foundation
import Synchronization
import Testing

/// The instance and the database judge a session's expiry by two clocks. The database's verdict
/// is the one that holds (it is what the writer checks), so it must also be the one answered.
@Suite("Clocks apart")
struct ClockSkewTests {
    /// The database's clock runs a minute ahead of the instance's: a session the instance still
    /// sees live has ended for the database, which refuses every decision in it. The client is
    /// told the session ended (409 `session_invalidated`), not to retry (503 `service_busy`).
    @Test func aSessionEndedByTheDatabasesClockAnswersSessionInvalidated() async throws {
        let url = try await TestDatabase.freshDatabase()
        let configuration = try await TestService.configuration(databaseURL: url)
        let setUp = Mutex<(tenant: TestAPI.Tenant, session: String)?>(nil)
        try await TestService.run(configuration: configuration) { api in
            let tenant = try await api.tenant()
            try await api.securityCheckHandlers(tenant, #"[{"securityCheck": "StepUp", "action": "cancel"}]"#)
            let opened = try await api.openSession(tenant, ttlSeconds: 30)
            try #require(opened.status == 201)
            let session = try #require(opened.string("id"))
            setUp.withLock { $0 = (tenant, session) }
        }
        let (tenant, session) = try #require(setUp.withLock { $0 })

        // Every connection opened from now on reads `now()` a minute ahead (the function is found
        // before pg_catalog's; new tables still go to public), as a database whose clock runs
        // ahead would give it.
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: url, poolSize: 1))
        try await pool.withConnection { connection in
            try connection.simpleQuery("CREATE SCHEMA clock_ahead")
            try connection.simpleQuery(
                "CREATE FUNCTION clock_ahead.now() RETURNS timestamptz LANGUAGE sql STABLE AS $$ SELECT pg_catalog.now() + interval '60 seconds' $$"
            )
            try connection.simpleQuery(
                #"DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET search_path = public, clock_ahead, pg_catalog', current_database()); END $$"#
            )
        }
        await pool.close()

        try await TestService.run(configuration: configuration) { api in
            let read = try await api.call(.get, "/v1/sessions/\(session)", key: tenant.clientKey)
            #expect(read.string("state") == "active", "the instance's clock still sees it live: \(read)")

            let challenge = try await api.decide(tenant, session: session, ChallengeBody(taskId: "late"))
            #expect(challenge.status == 409, "\(challenge)")
            #expect(challenge.errorCode == "session_invalidated")

            let checks = try await api.securityChecks(tenant, session: session, #"{"StepUp": null}"#)
            #expect(checks.status == 409, "\(checks)")
            #expect(checks.errorCode == "session_invalidated")

            let page = try await api.call(.get, "/v1/decisions", key: tenant.adminKey)
            #expect((page["decisions"] as? [Any])?.isEmpty == true, "nothing recorded in the ended session: \(page)")
        }
    }
}
