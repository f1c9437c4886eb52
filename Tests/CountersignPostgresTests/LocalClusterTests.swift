import CountersignCore
import CountersignPostgres
import CountersignTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// LocalPostgresCluster: create, reuse, restart with data, short socket paths.
@Suite("Local cluster")
struct LocalClusterTests {
    @Test("start twice reuses the running cluster; stop and start keep the data")
    func restartKeepsData() async throws {
        let cluster = try TestDatabase.privateCluster()
        let first = try await cluster.start()
        let second = try await cluster.start()
        #expect(first == second)
        #expect(cluster.isRunning)
        #expect(first.contains("host='\(cluster.socketDirectory)'"))

        let databaseURL = try await TestDatabase.onOwnThread { try cluster.createDatabase(name: "keep_me") }
        let pool = PostgresPool(configuration: Fixtures.configuration(databaseURL, poolSize: 1), logger: Fixtures.logger)
        try await pool.withConnection { try $0.simpleQuery("CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)") }
        await pool.close()

        try await cluster.stop()
        #expect(!cluster.isRunning)
        try await cluster.stop()  // stopping a stopped cluster is fine
        _ = try await cluster.start()

        let again = PostgresPool(configuration: Fixtures.configuration(databaseURL, poolSize: 1), logger: Fixtures.logger)
        let kept = try await again.withConnection { try $0.query("SELECT n FROM kept").first!.decode("n", as: Int.self) }
        await again.close()
        #expect(kept == 7)
        try await cluster.stop()
    }

    @Test("a directory too long for a socket path puts the socket under /tmp")
    func longDirectory() {
        let long = "/tmp/" + String(repeating: "very-long-directory-name/", count: 6)
        let cluster = LocalPostgresCluster(directory: long, logger: Fixtures.logger)
        #expect(cluster.socketDirectory.hasPrefix("/tmp/countersign-pg-"))
        #expect(cluster.socketDirectory == LocalPostgresCluster(directory: long, logger: Fixtures.logger).socketDirectory)
        #expect(cluster.dataDirectory == URL(fileURLWithPath: long).standardizedFileURL.path + "/data")

        let short = LocalPostgresCluster(directory: "/tmp/cs")
        #expect(short.socketDirectory == "/tmp/cs/socket")
    }

    /// The short socket directory's name follows from the cluster's path, so another local
    /// user can make it first: a directory that is not privately ours is refused before initdb.
    @Test("a short socket directory another user made, or others may enter, is refused", arguments: ["foreign", "open", "symlink"])
    func sharedSocketDirectoryNotOurs(_ kind: String) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-long-\(UUID().uuidString)").path
        let cluster = LocalPostgresCluster(directory: root + "/" + String(repeating: "d", count: 120), logger: Fixtures.logger)
        #expect(cluster.socketDirectory.hasPrefix("/tmp/countersign-pg-"))
        defer {
            // Started only if the check failed to refuse.
            if cluster.isRunning { try? cluster.stop() }
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: cluster.socketDirectory)
        }
        switch kind {
        case "foreign":
            // Root can hand it to another user; any other user can only test its own, open, kind.
            guard geteuid() == 0 else { return }
            try FileManager.default.createDirectory(atPath: cluster.socketDirectory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            #expect(chown(cluster.socketDirectory, 65534, 65534) == 0)
        case "open":
            try FileManager.default.createDirectory(atPath: cluster.socketDirectory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        default:
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: cluster.socketDirectory, withDestinationPath: root)
        }

        let error = await #expect(throws: CountersignError.self) { try await cluster.start() }
        #expect(error?.code == .localClusterFailed)
        #expect(error?.message.contains("is not a private directory of this user") == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: cluster.dataDirectory))
    }

    @Test("a cluster with a short socket directory of its own starts, and starts again")
    func sharedSocketDirectoryOurs() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-long-\(UUID().uuidString)").path
        let cluster = LocalPostgresCluster(directory: root + "/" + String(repeating: "d", count: 120), logger: Fixtures.logger)
        defer {
            try? cluster.stop()
            try? FileManager.default.removeItem(atPath: root)
            try? FileManager.default.removeItem(atPath: cluster.socketDirectory)
        }
        for _ in 0..<2 {
            _ = try await cluster.start()
            try await cluster.stop()
        }
    }

    @Test("a slow statement is logged with its text and without its parameters; a quick one is not")
    func slowStatementsLogged() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-slow-\(UUID().uuidString.prefix(8))").path
        let cluster = LocalPostgresCluster(directory: root, options: .init(durable: false, slowStatementThreshold: .seconds(1)), logger: Fixtures.logger)
        defer {
            try? cluster.stop()
            try? FileManager.default.removeItem(atPath: root)
        }
        _ = try await cluster.start()
        let pool = PostgresPool(configuration: Fixtures.configuration(cluster.connectionString(database: "postgres"), poolSize: 1), logger: Fixtures.logger)
        try await pool.withConnection { connection in
            _ = try connection.query("SELECT 'quick' AS marker")
            _ = try connection.query("SELECT pg_sleep($1::float8), $2::text AS secret", [.text("1.5"), .text("hunter2-in-a-parameter")])
        }
        await pool.close()
        try await cluster.stop()

        let log = try String(contentsOfFile: cluster.logFile, encoding: .utf8)
        #expect(log.contains("duration: ") && log.contains("SELECT pg_sleep($1::float8)"), "\(log)")
        #expect(!log.contains("hunter2-in-a-parameter"), "\(log)")
        #expect(!log.contains("'quick'"), "\(log)")
    }

    /// As root the server runs as the postgres user, which a directory above the cluster (a
    /// checkout under `/root`, mode 0700) can keep out: said before initdb, naming that directory.
    @Test(
        "as root, a directory the postgres user cannot pass through is named",
        .enabled(if: geteuid() == 0 && getpwnam("postgres") != nil)
    )
    func unreachableDirectory() async throws {
        let closed = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-closed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: closed, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: closed) }
        let cluster = LocalPostgresCluster(directory: closed + "/cluster", logger: Fixtures.logger)

        let error = await #expect(throws: CountersignError.self) { try await cluster.start() }
        #expect(error?.code == .localClusterFailed)
        #expect(error?.message.contains("cannot reach \(closed)/cluster: it may not pass through \(closed);") == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: cluster.dataDirectory))
    }
}
