import CountersignCore
import CountersignPostgres
import Synchronization

/// Ready means: the database answers, it holds every migration this build knows, and this
/// instance's master key is the database's (an instance left with the old key by a rotation can
/// open no secret it has not opened already, and should take no traffic).
final class Readiness: Sendable {
    let pool: PostgresPool
    /// The newest migration version among the files this instance was started with.
    let expectedSchemaVersion: Int
    /// Whether the master key is the database's; `nil` without one.
    let masterKeyMatchesDatabase: @Sendable () async throws -> Bool?
    /// A probe must answer quickly even when the database hangs.
    let timeout: Duration = .seconds(2)
    /// How long an answer is reused.
    let cacheTTL: Duration
    private let recent = Mutex<(at: ContinuousClock.Instant, failure: CountersignError?)?>(nil)

    init(pool: PostgresPool, expectedSchemaVersion: Int, cacheTTL: Duration, masterKeyMatchesDatabase: @escaping @Sendable () async throws -> Bool?) {
        self.pool = pool
        self.expectedSchemaVersion = expectedSchemaVersion
        self.cacheTTL = cacheTTL
        self.masterKeyMatchesDatabase = masterKeyMatchesDatabase
    }

    func check() async throws {
        let now = ContinuousClock.now
        if let recent = recent.withLock({ $0 }), now - recent.at < cacheTTL {
            if let failure = recent.failure { throw failure }
            return
        }
        do {
            try await checkDatabase()
            recent.withLock { $0 = (now, nil) }
        } catch let error as CountersignError {
            recent.withLock { $0 = (now, error) }
            throw error
        }
    }

    private func checkDatabase() async throws {
        let version: Int
        do {
            version = try await withTimeout(timeout) { [pool] in
                try await pool.withConnection { connection in
                    let exists = try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS exists")
                    guard try exists.rows.first?.decode("exists", as: Bool.self) == true else { return 0 }
                    let rows = try connection.query("SELECT coalesce(max(version), 0)::int8 AS version FROM schema_migrations")
                    return try rows.rows.first?.decode("version", as: Int.self) ?? 0
                }
            }
        } catch {
            throw CountersignError(.notReady, "the database is unreachable")
        }
        guard version >= expectedSchemaVersion else {
            throw CountersignError(.notReady, "the database schema is at version \(version); this build needs \(expectedSchemaVersion)")
        }
        let keyMatches: Bool?
        do {
            keyMatches = try await withTimeout(timeout, masterKeyMatchesDatabase)
        } catch {
            throw CountersignError(.notReady, "the database is unreachable")
        }
        guard keyMatches != false else {
            throw CountersignError(
                .notReady,
                "this instance's master key is not the database's (rotated with `countersign rekey`?): restart it with the current key"
            )
        }
    }
}

/// Runs `body`, giving up after `timeout` with a CancellationError.
func withTimeout<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw CancellationError()
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
