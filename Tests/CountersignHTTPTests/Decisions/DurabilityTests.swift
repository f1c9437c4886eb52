import CountersignPostgres
import CountersignTestSupport
import Foundation
import Logging
import Synchronization
import Testing

@Suite("Durable before answered")
struct DurabilityTests {
    @Test func noDatabaseMeans503AndNoSecret() async throws {
        let cluster = try TestDatabase.privateCluster()
        let url = try await cluster.start()
        defer { cluster.stopInBackground() }
        var configuration = try await TestService.configuration(databaseURL: url)
        // Keys stay verified while the database is away, so that the request reaches the decision.
        configuration.apiKeyCacheTTL = .seconds(600)
        try await TestService.run(configuration: configuration) { api in
            let (tenant, session) = try await Self.decidedOnce(api, password: "must-not-leak-while-down")

            try await cluster.stop()
            for task in 0..<3 {
                let reply = try await api.decide(tenant, session: session, ChallengeBody(taskId: "down-\(task)"))
                #expect(reply.status == 503, "\(reply)")
                #expect(["database_unavailable", "service_busy"].contains(reply.errorCode ?? ""), "\(reply)")
                #expect(!reply.text.contains("must-not-leak-while-down"))
            }

            _ = try await cluster.start()
            let recovered = try await Self.firstAnswered(api, tenant, session)
            #expect(recovered?.credentialPassword == "must-not-leak-while-down")
            // Only the answered decisions were recorded: the first and the one after recovery.
            let page = try await api.call(.get, "/v1/decisions", key: tenant.adminKey)
            #expect((page["decisions"] as? [[String: Any]])?.compactMap { $0["taskId"] as? String }.sorted() == ["task-1", "up"])
        }
    }

    /// An outage is said once by the pool; each request it fails has its access line and no
    /// warning of its own (at a fleet's rate, thousands of lines a second).
    @Test func anOutageIsLoggedOncePlusOneAccessLinePerRequest() async throws {
        let cluster = try TestDatabase.privateCluster()
        let url = try await cluster.start()
        defer { cluster.stopInBackground() }
        let box = LogLines()
        let handler = RecordingLogHandler(into: box)
        var logger = Logger(label: "countersign.test.outage", factory: { _ in handler })
        logger.logLevel = .info
        let configuration = try await TestService.configuration(databaseURL: url)
        try await TestService.run(configuration: configuration, logger: logger) { api in
            let tenant = try await api.tenant()
            let session = try await api.session(tenant)
            try await cluster.stop()
            for _ in 0..<5 {
                let reply = try await api.call(.get, "/v1/policy", key: tenant.adminKey)
                #expect(reply.status == 503 && reply.errorCode == "database_unavailable", "\(reply)")
                // A decision fails through the decision writer rather than a store's own call.
                let decision = try await api.decide(tenant, session: session)
                #expect(decision.status == 503, "\(decision)")
            }
        }
        let lines = box.all
        #expect(lines.filter { $0.contains("request failed") }.isEmpty, "\(lines)")
        #expect(lines.filter { $0.hasPrefix("warning request ") && $0.contains("\"status\": 503") }.count == 10, "\(lines)")
        #expect(lines.filter { $0.contains("cannot connect to the database") }.count == 1, "\(lines)")
    }

    /// A database that hangs rather than fails (its server and backends stopped) answers nothing
    /// and enforces no statement timeout of its own: the decision still ends, with 503 and no
    /// secret, once the client-side wait (statement plus connect timeout) is over.
    @Test func aHungDatabaseMeans503AndNoSecret() async throws {
        let cluster = try TestDatabase.privateCluster()
        let url = try await cluster.start()
        defer { cluster.stopInBackground() }
        var configuration = try await TestService.configuration(databaseURL: url)
        configuration.apiKeyCacheTTL = .seconds(600)
        configuration.database.statementTimeout = .seconds(1)
        configuration.database.connectTimeout = .seconds(1)
        try await TestService.run(configuration: configuration) { api in
            let (tenant, session) = try await Self.decidedOnce(api, password: "must-not-leak-while-hung")

            let stopped = try await Self.serverProcesses(of: cluster, url: url)
            for process in stopped { kill(process, SIGSTOP) }
            let started = ContinuousClock.now
            let reply = try await api.decide(tenant, session: session, ChallengeBody(taskId: "hung"))
            let waited = ContinuousClock.now - started
            for process in stopped { kill(process, SIGCONT) }
            #expect(reply.status == 503 && reply.errorCode == "database_unavailable", "\(reply)")
            #expect(!reply.text.contains("must-not-leak-while-hung"))
            #expect(waited < .seconds(20), "answered after \(waited)")

            let recovered = try await Self.firstAnswered(api, tenant, session)
            #expect(recovered?.credentialPassword == "must-not-leak-while-hung")
        }
    }

    /// A tenant releasing `password` with persistence `none`, a session, and one decision
    /// answered: everything a decision needs is then in the service's memory, and only its
    /// record needs the database.
    private static func decidedOnce(_ api: TestAPI, password: String) async throws -> (TestAPI.Tenant, String) {
        let tenant = try await api.tenant()
        _ = try await api.credential(tenant, password: password)
        try await api.releasePolicy(tenant, then: #""persistence": "none""#)
        let session = try await api.session(tenant)
        #expect(try await api.decided(tenant, session: session).credentialPassword == password)
        return (tenant, session)
    }

    /// The first decision answered 200 (task `up`) within about five seconds, or nil.
    private static func firstAnswered(_ api: TestAPI, _ tenant: TestAPI.Tenant, _ session: String) async throws -> Reply? {
        for _ in 0..<50 {
            let reply = try await api.decide(tenant, session: session, ChallengeBody(taskId: "up"))
            if reply.status == 200 { return reply }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// The postmaster, which takes new connections, and the backends serving the open ones.
    private static func serverProcesses(of cluster: LocalPostgresCluster, url: String) async throws -> [pid_t] {
        let pidFile = try String(contentsOfFile: cluster.dataDirectory + "/postmaster.pid", encoding: .utf8)
        let postmaster = try #require(pid_t(pidFile.split(separator: "\n").first ?? ""))
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: url, poolSize: 1))
        let backends = try await pool.withConnection { connection in
            try connection.query("SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
                .rows.map { pid_t(try $0.decode("pid", as: Int.self)) }
        }
        await pool.close()
        return [postmaster] + backends
    }
}

extension DurabilityTests {
    /// A database that answers but takes no writes (a failover to a standby not yet promoted, a
    /// full disk) cannot record a decision either: that is the same 503 as a database away, and
    /// no secret, not an internal error.
    @Test func aDatabaseTakingNoWritesMeans503AndNoSecret() async throws {
        let cluster = try TestDatabase.privateCluster()
        let url = try await cluster.start()
        defer { cluster.stopInBackground() }
        let superuser = PostgresPool(configuration: PostgresConfiguration(connectionString: url, poolSize: 1))
        var configuration = try await TestService.configuration(databaseURL: url)
        configuration.apiKeyCacheTTL = .seconds(600)
        try await TestService.run(configuration: configuration) { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, password: "must-not-leak-read-only")
            try await api.releasePolicy(tenant, then: #""persistence": "none""#)
            let session = try await api.session(tenant)
            #expect(try await api.decided(tenant, session: session).credentialPassword == "must-not-leak-read-only")

            try await superuser.withConnection { connection in
                try connection.simpleQuery("ALTER SYSTEM SET default_transaction_read_only = on")
                try connection.simpleQuery("SELECT pg_reload_conf()")
            }
            // Every connection reads the configuration again before its next statement.
            try await Task.sleep(for: .milliseconds(300))
            for task in 0..<3 {
                let reply = try await api.decide(tenant, session: session, ChallengeBody(taskId: "read-only-\(task)"))
                #expect(reply.status == 503 && reply.errorCode == "database_unavailable", "\(reply)")
                #expect(!reply.text.contains("must-not-leak-read-only"))
            }

            try await superuser.withConnection { connection in
                try connection.simpleQuery("ALTER SYSTEM RESET default_transaction_read_only")
                try connection.simpleQuery("SELECT pg_reload_conf()")
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await api.decided(tenant, session: session, taskId: "writable").credentialPassword == "must-not-leak-read-only")
        }
        await superuser.close()
    }
}

@Suite("No secret in logs")
struct SecretLoggingTests {
    @Test func releasingAPasswordLogsNoTraceOfIt() async throws {
        let box = LogLines()
        let handler = RecordingLogHandler(into: box)
        let logger = Logger(label: "countersign.test.recording", factory: { _ in handler })
        var recording = logger
        recording.logLevel = .trace
        let adminPassword = "admin-secret-Vq3-in-logs?"
        let typedPassword = "typed-secret-Lm8-in-logs?"
        try await TestService.run(logger: recording) { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant, password: adminPassword)
            try await api.releasePolicy(tenant, then: #""maxFailures": 1"#)
            let session = try await api.session(tenant)
            let released = try await api.decided(tenant, session: session)
            #expect(released.credentialPassword == adminPassword)
            _ = try await api.decided(tenant, session: session, taskId: "task-2")
            #expect(try await api.submit(tenant, session: session, space: Space.basic.with { $0.realm = "Typed" }, user: "u", password: typedPassword, persistence: "forSession").status == 201)
            #expect(try await api.decided(tenant, session: session, space: Space.basic.with { $0.realm = "Typed" }).credentialPassword == typedPassword)
            try await api.outcome(tenant, decision: try #require(released.string("decisionId")), "rejected", upstreamStatus: 401)
            #expect(try await api.call(.patch, "/v1/credentials/\(id)", key: tenant.adminKey, json: ["password": adminPassword + "2"]).status == 200)
            // Refusals too: a bad body that carries a password.
            _ = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: #"{"host": "*", "account": "a", "password": "\#(adminPassword)"}"#)
            _ = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: #"{"host": "a.example.com", "account": "a", "password": "\#(adminPassword)", "oops": 1}"#)
        }
        let lines = box.all
        #expect(lines.count > 10, "the service logged too little for this test to mean anything")
        for line in lines {
            #expect(!line.contains("admin-secret-Vq3"), "\(line)")
            #expect(!line.contains("typed-secret-Lm8"), "\(line)")
        }
    }
}

/// What `/metrics` tells an operator of an outage, from a real `countersign serve` (its own
/// metrics, which the in-process tests share).
@Suite("Outage metrics")
struct OutageMetricsTests {
    static func metrics(_ api: TestAPI) async throws -> String {
        String(decoding: try await api.call(.get, "/metrics").body, as: UTF8.self)
    }

    /// Whether `text` has a line starting with each of `lines`.
    static func shows(_ text: String, _ lines: [String]) -> Bool {
        lines.allSatisfy { line in text.split(separator: "\n").contains { $0.hasPrefix(line) } }
    }

    /// Waits at most ten seconds until the metrics text holds every line of `expected`.
    static func metrics(_ api: TestAPI, showing expected: [String]) async throws -> String {
        var text = ""
        for _ in 0..<100 {
            text = try await metrics(api)
            if shows(text, expected) { return text }
            // Readiness asks the database, which is what finds it gone (or back).
            _ = try await api.call(.get, "/readyz")
            try await Task.sleep(for: .milliseconds(100))
        }
        return text
    }

    /// An instance started while the database is away serves its probes, unready, rather than
    /// exiting (a crash loop under an orchestrator), and migrates once the database is back.
    @Test func anInstanceStartedWithoutItsDatabaseMigratesOnceItIsBack() async throws {
        let cluster = try TestDatabase.privateCluster()
        let url = try await cluster.start()
        defer { cluster.stopInBackground() }
        try await cluster.stop()
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let instance = try ServiceProcess(databaseURL: url, keys: keys, logLevel: "warning")
        defer { instance.stop() }
        #expect(try await instance.statusOnceListening(of: "/healthz") == 200, "\(instance.log)")
        #expect(await instance.status(of: "/readyz") == 503)
        #expect(instance.log.contains("cannot reach the database to apply migrations"), "\(instance.log)")

        _ = try await cluster.start()
        try await instance.waitUntilReady()
        let api = TestAPI(instance.client())
        #expect(try await api.tenant().id.isEmpty == false, "migrated: a tenant can be made")
    }

    /// Stopped while it waits for its database, an instance exits as from any shutdown: status 0,
    /// which a supervisor does not take for a crash.
    @Test func anInstanceWaitingForItsDatabaseStopsCleanly() async throws {
        // A port nothing listens on: the database refuses, as a stopped one does.
        let url = "host=127.0.0.1 port=\(try LoopbackPort.free()) user=postgres dbname=postgres"
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let instance = try ServiceProcess(databaseURL: url, keys: keys, logLevel: "warning")
        defer { instance.stop() }
        #expect(try await instance.statusOnceListening(of: "/healthz") == 200, "\(instance.log)")
        instance.signal(SIGTERM)
        #expect(try await instance.exitStatus(within: .seconds(20)) == 0, "\(instance.log)")
        #expect(!instance.log.contains("Error:"), "\(instance.log)")
    }

    @Test func theDatabaseAndTheListenerAreReportedDownAndBackUp() async throws {
        let cluster = try TestDatabase.privateCluster()
        let url = try await cluster.start()
        defer { cluster.stopInBackground() }
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let instance = try await ServiceProcess.ready(databaseURL: url, keys: keys)
        defer { instance.stop() }
        let client = instance.client()
        defer { Task { try? await client.shutdown() } }
        let api = TestAPI(client)

        let up = ["countersign_db_reachable 1", #"countersign_db_listening{channel="countersign_access"} 1"#]
        let down = ["countersign_db_reachable 0", #"countersign_db_listening{channel="countersign_access"} 0"#]
        let before = try await Self.metrics(api, showing: up)
        #expect(Self.shows(before, up), "\(before)")
        try await cluster.stop()
        let during = try await Self.metrics(api, showing: down)
        #expect(Self.shows(during, down), "\(during)")
        _ = try await cluster.start()
        let after = try await Self.metrics(api, showing: up)
        #expect(Self.shows(after, up), "\(after)")
    }
}
