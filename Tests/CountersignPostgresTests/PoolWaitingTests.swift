import CountersignPostgres
import CountersignTestSupport
import Logging
import Testing

/// Waiting for a connection: order, cancellation, timeout.
@Suite("Waiting for a connection")
struct PoolWaitingTests {
    @Test("a waiter cancelled while waiting leaves at once and the pool stays healthy")
    func cancelledWaiter() async throws {
        try await Fixtures.withFreshPool(poolSize: 1) { pool, database in
            let occupation = try await OccupiedConnection(pool, database: database)
            let ran = Locked(false)
            let waiter = Task {
                try await pool.withConnection { _ in ran.withLock { $0 = true } }
            }
            #expect(await eventually { pool.statistics.waiters == 1 })

            let clock = ContinuousClock()
            let start = clock.now
            waiter.cancel()
            let result = await waiter.result
            let waited = clock.now - start

            #expect(throws: CancellationError.self) { try result.get() }
            // The holder never lets go by itself: leaving at all proves the waiter did not wait for it.
            #expect(waited < .seconds(2), "the cancelled waiter left after \(waited)")
            #expect(pool.statistics.waiters == 0)
            #expect(pool.statistics.inUse == 1, "the holder still runs")

            try await occupation.release()
            #expect(ran.withLock { $0 } == false)
            let one = try await pool.withConnection { try $0.query("SELECT 1 AS v").first!.decode("v", as: Int.self) }
            #expect(one == 1)
            #expect(pool.statistics.inUse == 0)
            #expect(pool.statistics.open == 1)
        }
    }

    @Test("a task cancelled before it asks does not get a connection")
    func alreadyCancelled() async throws {
        try await Fixtures.withFreshPool(poolSize: 1) { pool, _ in
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await pool.withConnection { _ in 1 }
            }
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(pool.statistics.inUse == 0)
        }
    }

    @Test("waiting longer than acquireTimeout fails with pool_timeout")
    func acquireTimeout() async throws {
        try await Fixtures.withFreshPool(poolSize: 1, acquireTimeout: .milliseconds(200)) { pool, database in
            let occupation = try await OccupiedConnection(pool, database: database)
            let clock = ContinuousClock()
            let start = clock.now
            let error = await Fixtures.expectPostgresError(.poolTimeout) {
                _ = try await pool.withConnection { _ in 1 }
            }
            let waited = clock.now - start
            #expect(error != nil)
            #expect(waited >= .milliseconds(150) && waited < .seconds(3), "timed out after \(waited)")
            #expect(pool.statistics.waiters == 0)
            try await occupation.release()
            #expect(try await pool.withConnection { _ in 2 } == 2)
        }
    }

    /// A saturated pool times out a waiter per request: the metric counts each, the log says it
    /// once in a while, with how many timed out since it last did.
    @Test("acquire timeouts are logged at most every ten seconds")
    func acquireTimeoutNotices() async throws {
        let database = try await TestDatabase.freshDatabase()
        let lines = LogLines()
        var logger = Logger(label: "countersign.test.pool", factory: { _ in RecordingLogHandler(into: lines) })
        logger.logLevel = .info
        let pool = PostgresPool(configuration: Fixtures.configuration(database, poolSize: 1, acquireTimeout: .milliseconds(50)), logger: logger)
        let occupation = try await OccupiedConnection(pool, database: database)
        for _ in 0..<4 {
            let error = await Fixtures.expectPostgresError(.poolTimeout) { _ = try await pool.withConnection { _ in 1 } }
            #expect(error != nil)
        }
        try await occupation.release()
        let notices = lines.all.filter { $0.contains("timed out waiting for a database connection") }
        #expect(notices.count == 1, "\(notices)")
        #expect(notices.first?.contains(#""db.pool.acquire_timeouts": 1"#) == true, "\(notices)")
        await pool.close()
    }

    @Test("waiters are served first come, first served")
    func fifo() async throws {
        try await Fixtures.withFreshPool(poolSize: 1) { pool, database in
            let occupation = try await OccupiedConnection(pool, database: database)
            let order = Locked<[Int]>([])
            var waiters: [Task<Void, any Error>] = []
            for index in 0..<6 {
                waiters.append(
                    Task {
                        try await pool.withConnection { _ in order.withLock { $0.append(index) } }
                    }
                )
                #expect(await eventually { pool.statistics.waiters == index + 1 })
            }
            try await occupation.release()
            for waiter in waiters { try await waiter.value }
            #expect(order.withLock { $0 } == Array(0..<6))
        }
    }

    @Test("a connection left in a transaction is rolled back before reuse")
    func leftoverTransaction() async throws {
        try await Fixtures.withFreshPool(poolSize: 1) { pool, _ in
            try await pool.withConnection { connection in
                try connection.simpleQuery("CREATE TABLE t (n int)")
                try connection.simpleQuery("BEGIN")
                try connection.execute("INSERT INTO t VALUES ($1)", [1])
            }
            let count = try await pool.withConnection { connection in
                try connection.query("SELECT count(*) AS n FROM t").first!.decode("n", as: Int.self)
            }
            #expect(count == 0)
        }
    }
}
