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

        try await Self.shiftDatabaseClock(url, bySeconds: 60)

        try await TestService.run(configuration: configuration) { api in
            let read = try await api.call(.get, "/v1/sessions/\(session)", key: tenant.clientKey)
            #expect(read.string("state") == "invalidated", "the instance's clock still sees it live, the database's not: \(read)")
            #expect(read.string("invalidationReason") == "expired")

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

    /// The database's clock runs a minute behind the instance's: a block the instance sees
    /// ended still holds for the database, whose clock set it. The credential is not released.
    @Test func aBlockThatHoldsByTheDatabasesClockReleasesNothing() async throws {
        try await Self.runWithDatabaseClock(shiftedBySeconds: -60) { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, password: "blocked-for-30-seconds")
            try await api.releasePolicy(tenant, then: #""persistence": "none", "maxFailures": 1, "blockSeconds": 30"#)
            let session = try await api.session(tenant)
            let released = try await api.decided(tenant, session: session)
            #expect(released.credentialPassword == "blocked-for-30-seconds")
            let rejected = try await api.outcome(tenant, decision: try #require(released.string("decisionId")), "rejected", upstreamStatus: 401)
            #expect(rejected.status == 200, "\(rejected)")

            // Blocked until the database's now() plus 30 s: 30 s ago by the instance's clock.
            let again = try await api.decide(tenant, session: try await api.session(tenant, clientId: "device-2"), ChallengeBody(taskId: "later"))
            #expect(again.status == 200, "\(again)")
            #expect(again.credentialPassword == nil, "a credential still blocked was released: \(again)")
            #expect(again.string("disposition") == "cancelAuthenticationChallenge")
            #expect(again.string("blockedUntil") != nil)
        }
    }

    /// The database's clock runs a minute behind the instance's: a session that has ended by the
    /// instance's clock is live for the database, which records decisions in it. It is decided
    /// in, as explain (which judges by the database's clock too) says.
    @Test func aSessionLiveByTheDatabasesClockIsDecidedIn() async throws {
        try await Self.runWithDatabaseClock(shiftedBySeconds: -60) { api in
            let tenant = try await api.tenant()
            try await api.securityCheckHandlers(tenant, #"[{"securityCheck": "StepUp", "action": "cancel"}]"#)
            // Expires 30 s after the database's now(): 30 s ago by the instance's clock.
            let opened = try await api.openSession(tenant, ttlSeconds: 30)
            try #require(opened.status == 201)
            let session = try #require(opened.string("id"))

            let read = try await api.call(.get, "/v1/sessions/\(session)", key: tenant.clientKey)
            #expect(read.string("state") == "active", "\(read)")

            let challenge = try await api.decide(tenant, session: session, ChallengeBody(taskId: "in-time"))
            #expect(challenge.status == 200, "\(challenge)")

            let checks = try await api.securityChecks(tenant, session: session, #"{"StepUp": null}"#)
            #expect(checks.status == 200, "\(checks)")
        }
    }

    /// Runs `body` against a service on a fresh database whose clock is `seconds` off the
    /// instance's, migrated before the shift.
    static func runWithDatabaseClock(shiftedBySeconds seconds: Int, _ body: @Sendable (TestAPI) async throws -> Void) async throws {
        let url = try await TestDatabase.freshDatabase()
        let configuration = try await TestService.configuration(databaseURL: url)
        try await TestService.run(configuration: configuration) { _ in }
        try await shiftDatabaseClock(url, bySeconds: seconds)
        try await TestService.run(configuration: configuration) { try await body($0) }
    }

    /// Every connection opened from now on reads `now()` `seconds` ahead (behind, when negative),
    /// as a database whose clock is that far from the instance's would give it: the function is
    /// found before pg_catalog's, and new tables still go to public.
    static func shiftDatabaseClock(_ url: String, bySeconds seconds: Int) async throws {
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: url, poolSize: 1))
        try await pool.withConnection { connection in
            try connection.simpleQuery("CREATE SCHEMA shifted_clock")
            try connection.simpleQuery(
                "CREATE FUNCTION shifted_clock.now() RETURNS timestamptz LANGUAGE sql STABLE AS $$ SELECT pg_catalog.now() + interval '\(seconds) seconds' $$"
            )
            try connection.simpleQuery(
                "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET search_path = public, shifted_clock, pg_catalog', current_database()); END $$"
            )
        }
        await pool.close()
    }
}
