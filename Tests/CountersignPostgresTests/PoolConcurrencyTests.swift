import CountersignPostgres
import Testing

/// Many callers share few connections.
@Suite("Pool under concurrency")
struct PoolConcurrencyTests {
    @Test("50 concurrent callers on a pool of 3 all complete, never more than 3 connections")
    func fiftyCallersThreeConnections() async throws {
        let applicationName = Fixtures.uniqueName("concurrency")
        try await Fixtures.withFreshPool(poolSize: 3, applicationName: applicationName) { pool, _ in
            let concurrency = Locked((current: 0, maximum: 0))
            let serverSide = Locked(0)

            let pids = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        try await pool.withConnection { connection in
                            concurrency.withLock { state in
                                state.current += 1
                                state.maximum = max(state.maximum, state.current)
                            }
                            defer { concurrency.withLock { $0.current -= 1 } }
                            let row = try connection.query(
                                "SELECT pg_backend_pid() AS pid, (SELECT count(*) FROM pg_stat_activity WHERE application_name = $1) AS sessions, pg_sleep(0.005)",
                                [.text(applicationName)]
                            ).first!
                            let sessions = try row.decode("sessions", as: Int.self)
                            serverSide.withLock { $0 = max($0, sessions) }
                            return try row.decode("pid", as: Int.self)
                        }
                    }
                }
                var pids: [Int] = []
                for try await pid in group { pids.append(pid) }
                return pids
            }

            #expect(pids.count == 50)
            #expect(Set(pids).count <= 3)
            #expect(concurrency.withLock { $0.maximum } <= 3)
            #expect(serverSide.withLock { $0 } <= 3)
            let statistics = pool.statistics
            #expect(statistics.inUse == 0)
            #expect(statistics.waiters == 0)
            #expect(statistics.open <= 3)
            #expect(statistics.idle == statistics.open)
            #expect(statistics.size == 3)
        }
    }

    @Test("connections are opened lazily and reused")
    func lazyConnections() async throws {
        try await Fixtures.withFreshPool(poolSize: 4) { pool, _ in
            #expect(pool.statistics.open == 0)
            let first = try await pool.withConnection { try $0.query("SELECT pg_backend_pid() AS pid").first!.decode("pid", as: Int.self) }
            let second = try await pool.withConnection { try $0.query("SELECT pg_backend_pid() AS pid").first!.decode("pid", as: Int.self) }
            #expect(first == second)
            #expect(pool.statistics.open == 1)
        }
    }

    @Test("prepared statements are reused per connection and survive errors")
    func preparedStatements() async throws {
        try await Fixtures.withFreshPool(poolSize: 1) { pool, _ in
            let prepared = try await pool.withConnection { connection in
                for value in 0..<5 {
                    _ = try connection.query("SELECT $1::int8 + 1 AS v", [.int(value)])
                }
                _ = try? connection.query("SELECT 1 / $1::int8 AS v", [0])
                _ = try connection.query("SELECT $1::int8 + 1 AS v", [.int(9)])
                return try connection.query("SELECT count(*) AS n FROM pg_prepared_statements").first!.decode("n", as: Int.self)
            }
            // "SELECT $1::int8 + 1", "SELECT 1 / $1::int8", and nothing for the unparameterized count.
            #expect(prepared == 2)
        }
    }

    @Test("a schema change under a cached statement is retried transparently")
    func stalePlan() async throws {
        try await Fixtures.withFreshPool(poolSize: 1) { pool, _ in
            let values = try await pool.withConnection { connection in
                try connection.simpleQuery("CREATE TABLE t (a int); INSERT INTO t VALUES (1)")
                let before = try connection.query("SELECT * FROM t WHERE a = $1", [1]).columns
                try connection.simpleQuery("ALTER TABLE t ADD COLUMN b text DEFAULT 'x'")
                let after = try connection.query("SELECT * FROM t WHERE a = $1", [1]).columns
                return (before, after)
            }
            #expect(values.0 == ["a"])
            #expect(values.1 == ["a", "b"])
        }
    }
}
