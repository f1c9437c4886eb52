import CountersignPostgres
import CountersignTestSupport
import Foundation
import Testing

/// Statements over TLS go through the same nonblocking waits as over a Unix socket, where TLS
/// adds its own buffering: results of every size against record and buffer boundaries, and
/// parameters larger than the socket's buffers, must arrive whole and in time.
@Suite("Connections over TLS")
struct TLSConnectionTests {
    @Test("statements and results of every size go through a TLS connection whole")
    func statementsOverTLS() async throws {
        let cluster = try TestDatabase.privateCluster()
        let port = try await Self.startWithTLS(cluster)
        var configuration = Fixtures.configuration(
            "host=127.0.0.1 port=\(port) user=\(cluster.options.superuser) dbname=postgres sslmode=require",
            poolSize: 1,
            statementTimeout: .seconds(5)
        )
        configuration.connectTimeout = .seconds(5)
        let pool = PostgresPool(configuration: configuration, logger: Fixtures.logger)

        let encrypted = try await pool.withConnection {
            try $0.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").first!.decode("ssl", as: Bool.self)
        }
        #expect(encrypted)
        // Around libpq's 8 KiB reads and 16 KiB buffer, TLS's 16 KiB records, and far beyond.
        for size in [0, 1, 8_191, 8_192, 8_193, 16_379, 16_384, 16_400, 32_768, 65_536, 1_000_000, 8_000_000] {
            let row = try await pool.withConnection { connection in
                try connection.query(
                    "SELECT repeat('x', $1::int) AS made, length($2::text) AS received",
                    [.int(Int64(size)), .text(String(repeating: "y", count: size))]
                ).first!
            }
            #expect(try row.decode("made", as: String.self).utf8.count == size)
            #expect(try row.decode("received", as: Int.self) == size)
        }
        let rows = try await pool.withConnection { try $0.query("SELECT n, md5(n::text) AS h FROM generate_series(1, 50000) AS n").rows }
        #expect(rows.count == 50_000)
        #expect(try rows.last?.decode("n", as: Int.self) == 50_000)
        await pool.close()
        try await Fixtures.blocking { try cluster.stop() }
    }

    /// Starts `cluster` listening on a free loopback port with TLS (the test PKI's server
    /// certificate) besides its Unix socket, and returns the port.
    private static func startWithTLS(_ cluster: LocalPostgresCluster) async throws -> Int {
        try await Fixtures.blocking {
            try cluster.start()
            try cluster.stop()
        }
        let pki = try TestPKI.shared()
        let data = cluster.dataDirectory
        let owner = try FileManager.default.attributesOfItem(atPath: data)
        for (source, name) in [(pki.server.chainPath, "tls.crt"), (pki.server.keyPath, "tls.key")] {
            let target = data + "/" + name
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.copyItem(atPath: source, toPath: target)
            // PostgreSQL refuses a key that others can read, or that is not its own.
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o600, .ownerAccountID: owner[.ownerAccountID]!, .groupOwnerAccountID: owner[.groupOwnerAccountID]!],
                ofItemAtPath: target
            )
        }
        let port = try LoopbackPort.free()
        // After the include of the cluster's own settings, so these win.
        let settings = "\nlisten_addresses = '127.0.0.1'\nport = \(port)\nssl = on\nssl_cert_file = 'tls.crt'\nssl_key_file = 'tls.key'\n"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: data + "/postgresql.conf"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(settings.utf8))
        try handle.close()
        try await Fixtures.blocking { try cluster.start() }
        return port
    }
}
