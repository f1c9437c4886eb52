import CountersignCore
import CountersignHTTP
import CountersignPostgres
import CountersignTestSupport
import Foundation
import Logging
import Testing

@Suite("Probes and metrics")
struct ProbeTests {
    @Test func healthAndReadiness() async throws {
        try await TestService.run { api in
            let health = try await api.call(.get, "/healthz")
            let readiness = try await api.call(.get, "/readyz")
            #expect(health.string("status") == "ok")
            #expect(readiness.string("status") == "ready")
        }
    }

    @Test func probesIgnoreQueries() async throws {
        try await TestService.run { api in
            for path in ["/healthz?_=1717171717", "/readyz?check=db&check=again", "/metrics?format=", "/healthz?%00", "/readyz?a"] {
                let get = try await api.call(.get, path)
                #expect(get.status == 200, "\(path): \(get)")
                let head = try await api.call(.head, path, checkContract: false)
                #expect(head.status == 200, "HEAD \(path): \(head)")
            }
        }
    }

    @Test func everyGetRouteAnswersHeadWithoutABody() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            for (path, key) in [("/healthz", nil), ("/readyz", nil), ("/v1/keys", tenant.adminKey)] {
                let reply = try await api.call(.head, path, key: key, checkContract: false)
                #expect(reply.status == 200, "\(path): \(reply)")
                #expect(reply.body.isEmpty, "\(path)")
            }
            #expect(try await api.call(.head, "/v1/keys", key: tenant.clientKey, checkContract: false).status == 403)
        }
    }

    @Test func metricsInPrometheusText() async throws {
        try await TestService.run { api in
            _ = try await api.call(.get, "/healthz")
            let metrics = try await api.call(.get, "/metrics")
            #expect(metrics.status == 200)
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains(#"countersign_http_requests_total{route="/healthz",method="GET",status="200"}"#))
            #expect(text.contains("countersign_http_request_duration_seconds_bucket"))
            #expect(text.contains("countersign_db_pool_connections"))
            #expect(text.contains("countersign_db_pool_waiters"))
            #expect(text.contains("countersign_build_info{version=\"\(Release.version)\"} 1.0\n"), "\(text)")
            // Counters an alert may watch exist before their first event.
            #expect(text.contains(#"countersign_decisions_total{disposition="rejectProtectionSpace",source="noMatchingRule"}"#), "\(text)")
            #expect(text.contains(#"countersign_security_check_answers_total{action="cancel"}"#), "\(text)")
        }
    }

    /// Every family of ours says what it counts, once, on the line before its type.
    @Test func everyMetricFamilyOfOursHasHelp() async throws {
        try await TestService.run { api in
            _ = try await api.call(.get, "/healthz")
            let lines = String(decoding: try await api.call(.get, "/metrics").body, as: UTF8.self).split(separator: "\n")
            let families = lines.filter { $0.hasPrefix("# TYPE countersign_") }.map { $0.split(separator: " ")[2] }
            #expect(families.count >= 10, "\(lines)")
            for family in families {
                let type = try #require(lines.firstIndex { $0.hasPrefix("# TYPE \(family) ") })
                #expect(type > 0 && lines[type - 1].hasPrefix("# HELP \(family) "), "\(family)")
                #expect(lines.filter { $0.hasPrefix("# HELP \(family) ") }.count == 1, "\(family)")
            }
            #expect(lines.contains("# HELP countersign_db_pool_waiters Callers waiting for a pool connection."))
        }
    }

    @Test func refusalsBeforeRoutingAndWrongMethodsAreCountedUnderTheirRoutes() async throws {
        try await TestService.run(.live) { api in
            let port = try #require(api.port)
            for request in ["BREW /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "PATCH /v1/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"] {
                _ = try await RawHTTP.exchange(request, port: port)
            }
            let text = String(decoding: try await api.call(.get, "/metrics").body, as: UTF8.self)
            // A made-up method is one `OTHER` series, however many there are.
            #expect(text.contains(#"countersign_http_requests_total{route="unmatched",method="OTHER",status="501"}"#), "\(text)")
            #expect(text.contains(#"countersign_http_requests_total{route="/v1/keys",method="PATCH",status="405"}"#), "\(text)")
        }
    }

    /// The parser passes WebDAV's methods and a few dozen others on to the router: each is
    /// counted as `OTHER`, or a scanner trying them on every route would open a thousand series.
    @Test func methodsHTTPDoesNotDefineAreCountedAsOtherOnRoutesToo() async throws {
        try await TestService.run(.live) { api in
            let port = try #require(api.port)
            for method in ["PROPFIND", "MKCOL"] {
                _ = try await RawHTTP.exchange("\(method) /v1/keys/\(UUID().uuidString) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", port: port)
            }
            let text = String(decoding: try await api.call(.get, "/metrics").body, as: UTF8.self)
            #expect(text.contains(#"countersign_http_requests_total{route="/v1/keys/{keyId}",method="OTHER",status="405"}"#), "\(text)")
            #expect(!text.contains("PROPFIND") && !text.contains("MKCOL"), "\(text)")
        }
    }

    /// A path no route takes is counted under the one label of requests no route took, as the
    /// refusals before routing are.
    @Test func pathsNoRouteTakesAreCountedAsUnmatched() async throws {
        try await TestService.run { api in
            #expect(try await api.call(.get, "/v1/no-such-route", checkContract: false).status == 404)
            let text = String(decoding: try await api.call(.get, "/metrics").body, as: UTF8.self)
            #expect(text.contains(#"countersign_http_requests_total{route="unmatched",method="GET",status="404"}"#), "\(text)")
            #expect(!text.contains(#"route="NotFound""#), "\(text)")
        }
    }

    @Test func refusalsBeforeRoutingAreTimedNotRecordedAsInstant() async throws {
        try await TestService.run(.live) { api in
            let port = try #require(api.port)
            _ = try await RawHTTP.exchange("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\n", port: port)
            let text = String(decoding: try await api.call(.get, "/metrics").body, as: UTF8.self)
            let series = #"{route="unmatched",method="GET",status="400"}"#
            let line = text.split(separator: "\n").first { $0.hasPrefix("countersign_http_request_duration_seconds_sum" + series) }
            let seconds = try #require(line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }, "\(text)")
            // The time it took to refuse: short, never nothing.
            #expect(seconds > 0, "\(text)")
        }
    }

    @Test func readinessTurns503WhenTheDatabaseStopsAndRecovers() async throws {
        let cluster = try TestDatabase.privateCluster()
        let url = try await cluster.start()
        var configuration = try await TestService.configuration(databaseURL: url)
        configuration.readinessCacheTTL = .zero
        try await TestService.run(configuration: configuration) { api in
            #expect(try await api.call(.get, "/readyz").status == 200)
            try await cluster.stop()
            let down = try await api.call(.get, "/readyz")
            #expect(down.status == 503)
            #expect(down.errorCode == "not_ready")
            #expect(try await api.call(.get, "/healthz").status == 200)
            _ = try await cluster.start()
            var ready = false
            for _ in 0..<50 where !ready {
                ready = try await api.call(.get, "/readyz").status == 200
                if !ready { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(ready)
        }
        try? await cluster.stop()
    }

    /// A query that waits (here for a lock) holds its connection until the statement timeout:
    /// probes still answer within their own, the second sharing the first's check rather than
    /// starting another.
    @Test func readinessAnswersInTimeWhenTheDatabaseHangs() async throws {
        let url = try await TestDatabase.freshDatabase()
        var configuration = try await TestService.configuration(databaseURL: url)
        configuration.readinessCacheTTL = .zero
        // Far beyond the probe's 2 s, so that an answer by its own timeout and one that waited
        // for the statement to die stay apart however slowly a busy machine runs the probe.
        configuration.database.statementTimeout = .seconds(30)
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: url, poolSize: 1))
        let pool2 = PostgresPool(configuration: PostgresConfiguration(connectionString: url, poolSize: 1))
        try await TestService.run(configuration: configuration) { api in
            #expect(try await api.call(.get, "/readyz").status == 200)
            let locked = AsyncStream<Void>.makeStream()
            let release = DispatchSemaphore(value: 0)
            let holder = Task {
                try await pool.withTransaction { connection in
                    try connection.execute("LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE")
                    locked.continuation.yield()
                    release.wait()
                }
            }
            for await _ in locked.stream { break }

            for _ in 0..<2 {
                let started = ContinuousClock.now
                let hung = try await api.call(.get, "/readyz")
                #expect(hung.status == 503 && hung.errorCode == "not_ready", "\(hung)")
                #expect(ContinuousClock.now - started < .seconds(15))
            }
            // At most one connection waits for the lock (none once the statement timeout ended
            // it, on a slow machine), however many probes there were.
            let waiting = try await pool2.withConnection { connection in
                try connection.query(
                    "SELECT count(*)::int8 AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                ).rows[0].decode("n", as: Int.self)
            }
            #expect(waiting <= 1)

            release.signal()
            try await holder.value
            var ready = false
            for _ in 0..<50 where !ready {
                ready = try await api.call(.get, "/readyz").status == 200
                if !ready { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(ready)
        }
        await pool.close()
        await pool2.close()
    }

    /// A flood of probes must not take the pool's connections from decisions.
    @Test func readinessAnswersAreReusedForTheirPeriod() async throws {
        let cluster = try TestDatabase.privateCluster()
        let url = try await cluster.start()
        var configuration = try await TestService.configuration(databaseURL: url)
        configuration.readinessCacheTTL = .seconds(60)
        try await TestService.run(configuration: configuration) { api in
            #expect(try await api.call(.get, "/readyz").status == 200)
            try await cluster.stop()
            #expect(try await api.call(.get, "/readyz").status == 200, "the answer of a moment ago")
        }
        try? await cluster.stop()
    }

    @Test("a migrations directory short of this build's schema is refused, not served as ready")
    func migrationsShortOfTheBuildAreRefused() async throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-no-migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        var configuration = try await TestService.configuration()
        configuration.migrationsDirectory = empty.path
        let error = #expect(throws: CountersignError.self) { _ = try buildApplication(configuration, logger: Logger(label: "countersign.test")) }
        #expect(error?.code == .migrationsIncomplete)
    }

    @Test func readinessIs503BeforeMigrations() async throws {
        try await TestService.run(configure: { $0.migrateAtStart = false }) { api in
            let reply = try await api.call(.get, "/readyz")
            #expect(reply.status == 503)
            #expect(reply.errorCode == "not_ready")
        }
    }
}
