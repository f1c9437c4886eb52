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
        let pool = Self.tlsPool(cluster, port: port, timeouts: .seconds(5))

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
        try await cluster.stop()
    }

    /// PostgreSQL writes TLS records of at most 8 KiB, but poolers, proxies and compatible servers
    /// write up to 16 KiB, of which libpq may read only a part: the rest waits in OpenSSL, where
    /// no socket event announces it (the same bug hung ruby-pg, psycopg and CockroachDB's
    /// clients). A proxy that writes each reply at once stands for them.
    @Test("a TLS reply whose last record libpq reads in part is answered, not timed out")
    func replyEndingInAPartlyReadRecord() async throws {
        let cluster = try TestDatabase.privateCluster()
        _ = try await cluster.start()
        let pki = try await TestPKI.shared()
        let script = NSTemporaryDirectory() + "countersign-tls-proxy-\(getpid()).py"
        try Self.wholeReplyProxy.write(toFile: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        let port = try LoopbackPort.free()
        let proxy = try BackgroundProcess(
            "/usr/bin/env",
            ["python3", script, cluster.socketDirectory + "/.s.PGSQL.\(cluster.options.port)", String(port), pki.server.chainPath, pki.server.keyPath]
        )
        defer { proxy.terminate() }
        let pool = Self.tlsPool(cluster, port: port, timeouts: .seconds(2))
        let listening = await eventually(timeout: .seconds(20)) {
            (try? await pool.withConnection { try $0.query("SELECT 1") }) != nil
        }
        try #require(listening)
        // Replies whose last 16 KiB record ends past libpq's free buffer space, and others.
        var failed: [Int: String] = [:]
        for rows in [300, 441, 442, 443, 885, 1180] {
            do {
                let result = try await pool.withConnection { try $0.query("SELECT repeat('x', 100) AS x FROM generate_series(1, $1::int)", [.int(Int64(rows))]) }
                #expect(result.count == rows)
            } catch {
                failed[rows] = "\(error)"
            }
        }
        #expect(failed.isEmpty, "\(failed.keys.sorted()): \(failed.values.first ?? "")")
        await pool.close()
        try await cluster.stop()
    }

    private static let wholeReplyProxy = #"""
# TLS-terminating proxy in front of a PostgreSQL Unix socket that, like some poolers and
# PostgreSQL-compatible servers, writes each server reply (up to ReadyForQuery) with one
# sendall, so TLS records are 16 KiB and the last one ends with ReadyForQuery.
import socket, ssl, struct, sys, threading
sockpath, port, certificate, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(certificate, key)

def recvn(s, n):
    b = b""
    while len(b) < n:
        x = s.recv(n - len(b))
        if not x: raise EOFError
        b += x
    return b

def handle(c):
    try:
        while True:
            ln, code = struct.unpack("!II", recvn(c, 8))
            if code == 80877103: c.sendall(b"S"); break
            if code == 80877104: c.sendall(b"N"); continue
            return
        s = ctx.wrap_socket(c, server_side=True)
        u = socket.socket(socket.AF_UNIX); u.connect(sockpath)
        def up():
            try:
                while True:
                    x = s.recv(65536)
                    if not x: break
                    u.sendall(x)
            except Exception: pass
            try: u.shutdown(socket.SHUT_WR)
            except Exception: pass
        threading.Thread(target=up, daemon=True).start()
        buf = b""; pending = b""
        while True:
            x = u.recv(65536)
            if not x: break
            buf += x
            while len(buf) >= 5:
                t = buf[0:1]; n = struct.unpack("!I", buf[1:5])[0]
                if len(buf) < 1 + n: break
                pending += buf[:1 + n]; buf = buf[1 + n:]
                if t in (b"Z", b"R", b"E"):
                    s.sendall(pending); pending = b""
        s.close()
    except Exception:
        pass

ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port)); ls.listen(16)
while True:
    c, _ = ls.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
"""#

    /// One connection to `cluster`'s superuser through TLS on `port`, with both timeouts `timeouts`.
    private static func tlsPool(_ cluster: LocalPostgresCluster, port: Int, timeouts: Duration) -> PostgresPool {
        var configuration = Fixtures.configuration(
            "host=127.0.0.1 port=\(port) user=\(cluster.options.superuser) dbname=postgres sslmode=require",
            poolSize: 1,
            statementTimeout: timeouts
        )
        configuration.connectTimeout = timeouts
        return PostgresPool(configuration: configuration, logger: Fixtures.logger)
    }

    /// Starts `cluster` listening on a free loopback port with TLS (the test PKI's server
    /// certificate) besides its Unix socket, and returns the port.
    private static func startWithTLS(_ cluster: LocalPostgresCluster) async throws -> Int {
        try await TestDatabase.onOwnThread {
            try cluster.start()
            try cluster.stop()
        }
        let pki = try await TestPKI.shared()
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
        try await cluster.start()
        return port
    }
}
