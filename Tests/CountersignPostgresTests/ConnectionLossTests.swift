import CountersignPostgres
import CountersignTestSupport
import Testing

/// A connection that breaks is reported once and replaced.
@Suite("Lost connections")
struct ConnectionLossTests {
    private func backendPID(_ pool: PostgresPool) async throws -> Int {
        try await pool.withConnection { try $0.query("SELECT pg_backend_pid() AS pid").first!.decode("pid", as: Int.self) }
    }

    @Test("a backend killed during a call gives connection_lost for that call; the next call succeeds")
    func killedDuringCall() async throws {
        try await Fixtures.withFreshPool(poolSize: 1) { pool, _ in
            let before = try await backendPID(pool)
            let attempts = Locked(0)
            let error = await Fixtures.expectPostgresError(.connectionLost) {
                try await pool.withConnection { connection in
                    attempts.withLock { $0 += 1 }
                    _ = try connection.query("SELECT pg_terminate_backend(pg_backend_pid())")
                }
            }
            // 57P01 (admin_shutdown) if the FATAL message arrived before the socket closed.
            #expect(["57P01", "08006"].contains(error?.sqlState ?? ""), "\(String(reflecting: error))")
            #expect(attempts.withLock { $0 } == 1, "the call must not be retried")
            #expect(pool.statistics.open == 0)

            let after = try await backendPID(pool)
            #expect(after != before)
            #expect(pool.statistics.open == 1)
        }
    }

    @Test("a transaction whose backend is killed is not retried and leaves nothing behind")
    func killedDuringTransaction() async throws {
        try await Fixtures.withFreshPool(poolSize: 2) { pool, _ in
            try await pool.withConnection { try $0.simpleQuery("CREATE TABLE t (n int)") }
            let attempts = Locked(0)
            await Fixtures.expectPostgresError(.connectionLost) {
                try await pool.withTransaction { connection in
                    attempts.withLock { $0 += 1 }
                    try connection.execute("INSERT INTO t VALUES (1)")
                    _ = try connection.query("SELECT pg_terminate_backend(pg_backend_pid())")
                }
            }
            #expect(attempts.withLock { $0 } == 1)
            let count = try await pool.withConnection { try $0.query("SELECT count(*) AS n FROM t").first!.decode("n", as: Int.self) }
            #expect(count == 0)
        }
    }

    @Test("a connection killed while idle in the pool is replaced before use")
    func killedWhileIdle() async throws {
        try await Fixtures.withFreshPool(poolSize: 2) { pool, _ in
            // Two open connections, both in use at once (however late either call starts): kill
            // one from the other.
            let gate = AsyncGate()
            let pids = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        try await pool.withConnection { connection in
                            gate.arriveAndWait()
                            return try connection.query("SELECT pg_backend_pid() AS pid").first!.decode("pid", as: Int.self)
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            try #require(Set(pids).count == 2)
            #expect(pool.statistics.open == 2)

            let survivors = try await pool.withConnection { connection in
                let me = try connection.query("SELECT pg_backend_pid() AS pid").first!.decode("pid", as: Int.self)
                let victim = try #require(pids.first { $0 != me })
                _ = try connection.query("SELECT pg_terminate_backend($1::int)", [.int(victim)])
                return victim
            }
            #expect(
                await eventually {
                    (try? await pool.withConnection { connection in
                        try connection.query("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1::int", [.int(survivors)])
                            .first!.decode("n", as: Int.self)
                    }) == 0
                }
            )

            // Every call succeeds, whichever connection it gets.
            for _ in 0..<4 {
                async let a = backendPID(pool)
                async let b = backendPID(pool)
                let current = try await [a, b]
                #expect(!current.contains(survivors))
            }
        }
    }
}
