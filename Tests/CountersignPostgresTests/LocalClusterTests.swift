import CountersignPostgres
import CountersignTestSupport
import Foundation
import Testing

/// LocalPostgresCluster: create, reuse, restart with data, short socket paths.
@Suite("Local cluster")
struct LocalClusterTests {
    @Test("start twice reuses the running cluster; stop and start keep the data")
    func restartKeepsData() async throws {
        let cluster = try TestDatabase.privateCluster()
        let first = try await Fixtures.blocking { try cluster.start() }
        let second = try await Fixtures.blocking { try cluster.start() }
        #expect(first == second)
        #expect(cluster.isRunning)
        #expect(first.contains("host='\(cluster.socketDirectory)'"))

        let databaseURL = try await Fixtures.blocking { try cluster.createDatabase(name: "keep_me") }
        let pool = PostgresPool(configuration: Fixtures.configuration(databaseURL, poolSize: 1), logger: Fixtures.logger)
        try await pool.withConnection { try $0.simpleQuery("CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)") }
        await pool.close()

        try await Fixtures.blocking { try cluster.stop() }
        #expect(!cluster.isRunning)
        try await Fixtures.blocking { try cluster.stop() }  // stopping a stopped cluster is fine
        try await Fixtures.blocking { _ = try cluster.start() }

        let again = PostgresPool(configuration: Fixtures.configuration(databaseURL, poolSize: 1), logger: Fixtures.logger)
        let kept = try await again.withConnection { try $0.query("SELECT n FROM kept").first!.decode("n", as: Int.self) }
        await again.close()
        #expect(kept == 7)
        try await Fixtures.blocking { try cluster.stop() }
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
}
