import CountersignCore
public import CountersignPostgres
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Real PostgreSQL databases for tests.
///
/// ``freshDatabase()`` creates a new, empty database for each caller on one server shared by
/// the whole test process:
/// - if `COUNTERSIGN_TEST_DATABASE_URL` is set (a libpq connection string of a role that may
///   `CREATE DATABASE`), on that server; the databases are dropped at exit;
/// - otherwise on a throwaway ``LocalPostgresCluster`` started on first use under
///   `<package root>/.build/test-postgres/<pid>` (or `$COUNTERSIGN_TEST_POSTGRES_ROOT/<pid>`),
///   non-durable for speed, stopped and deleted when the process exits. Clusters left
///   behind by a test process that crashed are swept on the next run.
///
/// Safe to call from parallel tests.
public enum TestDatabase {
    /// The connection string of a new, empty database.
    public static func freshDatabase() async throws -> String {
        let server = try await sharedServer.value
        let name = "countersign_test_" + randomSuffix()
        try await server.admin.withConnection { connection in
            // The name is ours (letters, digits, underscore), so it needs no quoting.
            try connection.simpleQuery("CREATE DATABASE \(name)")
        }
        if server.isExternal {
            cleanup.withLock { $0.externalDatabases.append(name) }
        }
        return try server.connectionString(name)
    }

    /// A pool configuration for `connectionString` whose callers may wait long for a connection.
    ///
    /// The whole suite runs at once on two cores, and tests that make many callers take turns
    /// on one row (a counter, a nonce count) keep the last of them waiting well past the 5 s a
    /// service allows by default; a `pool_timeout` there says nothing about what they test.
    public static func configuration(_ connectionString: String, poolSize: Int) -> PostgresConfiguration {
        PostgresConfiguration(connectionString: connectionString, poolSize: poolSize, acquireTimeout: .seconds(60))
    }

    /// A local cluster of the test's own, not yet started, for tests that stop and start
    /// the database (readiness, reconnection). Stopped and deleted when the process exits.
    ///
    /// Always local, even with `COUNTERSIGN_TEST_DATABASE_URL` set: the test needs to
    /// control the server.
    public static func privateCluster() throws -> LocalPostgresCluster {
        let number = cleanup.withLock { state in
            state.privateClusters += 1
            return state.privateClusters
        }
        let directory = testRoot + "/\(getpid())-private-\(number)"
        let cluster = LocalPostgresCluster(directory: directory, options: clusterOptions, logger: quietLogger)
        registerForCleanup(cluster)
        return cluster
    }

    // MARK: - The shared server

    private struct SharedServer: Sendable {
        let admin: PostgresPool
        let isExternal: Bool
        let connectionString: @Sendable (String) throws -> String
    }

    private static let sharedServer = Task<SharedServer, any Error> {
        if let url = ProcessInfo.processInfo.environment["COUNTERSIGN_TEST_DATABASE_URL"], !url.isEmpty {
            let admin = makeAdminPool(url)
            cleanup.withLock { $0.externalAdmin = admin }
            registerExitHandler()
            return SharedServer(admin: admin, isExternal: true) { name in
                try PostgresConfiguration.connectionString(url, replacingDatabaseWith: name)
            }
        }

        let cluster = LocalPostgresCluster(
            directory: testRoot + "/\(getpid())",
            options: clusterOptions,
            logger: quietLogger
        )
        registerForCleanup(cluster)
        cleanup.withLock { $0.sharedLog = cluster.logFile }
        let connectionString = try await onOwnThread {
            sweepAbandonedClusters()
            return try cluster.start()
        }
        return SharedServer(admin: makeAdminPool(connectionString), isExternal: false) { name in
            cluster.connectionString(database: name)
        }
    }

    /// Slow statements and lock waits are logged: what the server was doing when a test timed
    /// out is then in the log that `scripts/test` shows for a failed run (``keptLogs``).
    private static let clusterOptions = LocalPostgresCluster.Options(durable: false, maxConnections: 1000, slowStatementThreshold: .seconds(1))

    private static var quietLogger: Logger {
        var logger = Logger(label: "countersign.test-database")
        logger.logLevel = .warning
        return logger
    }

    private static func makeAdminPool(_ connectionString: String) -> PostgresPool {
        PostgresPool(
            configuration: PostgresConfiguration(
                connectionString: connectionString,
                poolSize: 4,
                // Every test of the suite asks for its database at about the same moment, and
                // they get them four at a time: on a busy machine the last wait minutes, which
                // says nothing about what they test.
                acquireTimeout: .seconds(900),
                statementTimeout: .seconds(60),
                applicationName: "countersign-test-admin"
            ),
            logger: quietLogger
        )
    }

    /// `<package root>/.build/test-postgres`, found from this file's path, unless
    /// `COUNTERSIGN_TEST_POSTGRES_ROOT` says otherwise.
    private static let testRoot: String = {
        if let root = ProcessInfo.processInfo.environment["COUNTERSIGN_TEST_POSTGRES_ROOT"], !root.isEmpty {
            return root
        }
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // CountersignTestSupport
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()
        return packageRoot.appendingPathComponent(".build/test-postgres").path
    }()

    /// Where the shared cluster's server log is kept after the run (`<test root>-logs/<pid>.log`),
    /// beside the test root, which `scripts/test` removes.
    private static var keptLogs: String { testRoot + "-logs" }

    private static func randomSuffix() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Runs blocking work (initdb, pg_ctl, waiting for a process) on a thread of its own. Swift
    /// concurrency has as many threads as cores (two on CI), and the in-process services of
    /// every other test run on them: two tests blocking one each froze the whole run, until a
    /// client's 15 s deadline passed in a test that had nothing to do with theirs.
    public static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try work() })
            }
            thread.start()
        }
    }

    // MARK: - Cleaning up

    private struct Cleanup: Sendable {
        var clusters: [LocalPostgresCluster] = []
        var externalAdmin: PostgresPool?
        var externalDatabases: [String] = []
        var privateClusters = 0
        var exitHandlerInstalled = false
        /// The shared cluster's server log, kept when its files are removed.
        var sharedLog: String?
    }

    private static let cleanup = Mutex(Cleanup())

    private static func registerForCleanup(_ cluster: LocalPostgresCluster) {
        cleanup.withLock { $0.clusters.append(cluster) }
        registerExitHandler()
    }

    private static func registerExitHandler() {
        let install = cleanup.withLock { state in
            defer { state.exitHandlerInstalled = true }
            return !state.exitHandlerInstalled
        }
        if install {
            atexit { TestDatabase.cleanUpAtExit() }
        }
    }

    private static func cleanUpAtExit() {
        let state = cleanup.withLock { state in
            defer {
                state.clusters.removeAll()
                state.externalDatabases.removeAll()
            }
            return state
        }
        for cluster in state.clusters {
            try? cluster.stop()
            if cluster.logFile == state.sharedLog {
                try? FileManager.default.createDirectory(atPath: keptLogs, withIntermediateDirectories: true)
                try? FileManager.default.copyItem(atPath: cluster.logFile, toPath: keptLogs + "/\(getpid()).log")
            }
            removeClusterFiles(cluster)
        }
        if let admin = state.externalAdmin, !state.externalDatabases.isEmpty {
            dropExternalDatabases(state.externalDatabases, using: admin)
        }
    }

    private static func removeClusterFiles(_ cluster: LocalPostgresCluster) {
        try? FileManager.default.removeItem(atPath: cluster.directory)
        if !cluster.socketDirectory.hasPrefix(cluster.directory) {
            try? FileManager.default.removeItem(atPath: cluster.socketDirectory)
        }
    }

    /// Drops this process's databases on the external server, waiting at most 10 seconds
    /// so that exiting never hangs on an unreachable server.
    private static func dropExternalDatabases(_ names: [String], using admin: PostgresPool) {
        let done = DispatchSemaphore(value: 0)
        Task {
            for name in names {
                _ = try? await admin.withConnection { connection in
                    try connection.simpleQuery("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
                }
            }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 10)
    }

    /// Stops and deletes clusters whose test process is gone (it crashed or was killed
    /// before its exit handler ran).
    private static func sweepAbandonedClusters() {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: testRoot) else { return }
        for entry in entries {
            guard let pid = Int32(entry.prefix(while: \.isNumber)), pid != getpid() else { continue }
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }
            let cluster = LocalPostgresCluster(directory: testRoot + "/" + entry, logger: quietLogger)
            try? cluster.stop()
            removeClusterFiles(cluster)
        }
    }
}

extension LocalPostgresCluster {
    /// Private clusters starting at once: `initdb` takes a core for a second or two. Unthrottled,
    /// the fifteen-odd private clusters of a run ran `initdb` at the same moment, next to every
    /// service of the run, and on two cores services under test missed 5 s timeouts.
    private static let starts = Turns(2)

    /// Starts the cluster on a thread of its own (see ``TestDatabase/onOwnThread(_:)``), two at
    /// most at once; async callers get this one, so none blocks on initdb and pg_ctl.
    public func start() async throws -> String {
        try await Self.starts.run {
            try await TestDatabase.onOwnThread { try self.start() }
        }
    }

    /// Stops the cluster on a thread of its own, as ``start()`` starts it.
    public func stop() async throws {
        try await TestDatabase.onOwnThread { try self.stop() }
    }

    /// Stops the cluster on a thread of its own without waiting: for `defer`, which cannot await.
    public func stopInBackground() {
        Thread.detachNewThread { try? self.stop() }
    }
}
