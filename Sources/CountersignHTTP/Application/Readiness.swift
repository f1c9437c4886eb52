import CountersignCore
import CountersignPostgres
import Logging
import Synchronization

/// Ready means: the database answers, it holds every migration this build knows, and this
/// instance's master key is the database's (an instance left with the old key by a rotation can
/// open no secret it has not opened already, and should take no traffic).
final class Readiness: Sendable {
    let pool: PostgresPool
    /// The newest migration version among the files this instance was started with.
    let expectedSchemaVersion: Int
    let hasMasterKey: Bool
    /// Whether the master key is the database's (`SecretVault.masterKeyMatchesDatabase`).
    let masterKeyMatchesDatabase: @Sendable () async throws -> Bool?
    let logger: Logger
    /// Whether the log has said that the master key is not the database's since it last was:
    /// probes ask every second, and one line says it.
    private let saidKeyMismatch = Atomic(false)
    /// A probe must answer quickly even when the database hangs.
    let timeout: Duration
    /// How long an answer is reused.
    let cacheTTL: Duration
    private let recent = Mutex<(at: ContinuousClock.Instant, failure: CountersignError?)?>(nil)
    /// The check under way, if one is (one that hangs, perhaps).
    fileprivate let ongoing = Mutex<Task<(version: Int, keyMatches: Bool?), any Error>?>(nil)

    init(
        pool: PostgresPool,
        expectedSchemaVersion: Int,
        cacheTTL: Duration,
        hasMasterKey: Bool,
        logger: Logger,
        timeout: Duration = .seconds(2),
        masterKeyMatchesDatabase: @escaping @Sendable () async throws -> Bool?
    ) {
        self.logger = logger
        self.timeout = timeout
        self.pool = pool
        self.expectedSchemaVersion = expectedSchemaVersion
        self.cacheTTL = cacheTTL
        self.hasMasterKey = hasMasterKey
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
        let keyMatches: Bool?
        do {
            (version, keyMatches) = try await ongoingCheck().value(within: timeout)
        } catch {
            // A pool whose callers queue while its calls keep ending is busy, not cut off: said
            // unready, every instance of an overloaded fleet would leave its load balancer at
            // once. What the last check found (the schema, the key) stands meanwhile.
            if pool.statistics.waiters > 0, let since = pool.sinceLastAnswer, since < timeout { return }
            throw CountersignError(.notReady, "the database is unreachable")
        }
        guard version >= expectedSchemaVersion else {
            throw CountersignError(.notReady, "the database schema is at version \(version); this build needs \(expectedSchemaVersion)")
        }
        guard keyMatches != false else {
            // Found when the database was out of reach at start, or after a rotation: the
            // instance serves nothing until it restarts with the database's key.
            if !saidKeyMismatch.exchange(true, ordering: .relaxed) {
                logger.error("not ready: \(Self.masterKeyMismatch(hasMasterKey: hasMasterKey))")
            }
            throw CountersignError(.notReady, Self.masterKeyMismatch(hasMasterKey: hasMasterKey))
        }
        saidKeyMismatch.store(false, ordering: .relaxed)
    }

    /// Why an instance whose master key does not open the database's secrets cannot serve it.
    static func masterKeyMismatch(hasMasterKey: Bool) -> String {
        hasMasterKey
            ? "the master key is not this database's: it does not open what the database holds sealed under its master key (COUNTERSIGN_MASTER_KEY_FILE; after `countersign rekey`, the new key)"
            : "this instance has no master key, and the database has one: an instance started with it sealed a check value, and any secret, under it (COUNTERSIGN_MASTER_KEY_FILE)"
    }
}

extension Readiness {
    /// The check under way, or a new one. A query the database does not answer holds its
    /// connection until the pool gives up on it (statement plus connect timeout), so probes share
    /// one check rather than each taking another of the pool's connections while it hangs.
    fileprivate func ongoingCheck() -> Task<(version: Int, keyMatches: Bool?), any Error> {
        ongoing.withLock { ongoing in
            if let ongoing { return ongoing }
            let check = Task { [self] () -> (version: Int, keyMatches: Bool?) in
                defer { self.ongoing.withLock { $0 = nil } }
                let version = try await pool.withConnection { connection in
                    let exists = try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS exists")
                    guard try exists.rows.first?.decode("exists", as: Bool.self) == true else { return 0 }
                    let rows = try connection.query("SELECT coalesce(max(version), 0)::int8 AS version FROM schema_migrations")
                    return try rows.rows.first?.decode("version", as: Int.self) ?? 0
                }
                // The key's check value comes with a migration: asked of a current schema only.
                return (version, version >= expectedSchemaVersion ? try await masterKeyMatchesDatabase() : nil)
            }
            ongoing = check
            return check
        }
    }
}

extension Task where Failure == any Error {
    /// The task's value, or a `CancellationError` once `timeout` has passed. The task goes on
    /// unwaited for, and is not cancelled: other probes that joined it later wait on it for their
    /// own `timeout` (it ends by itself, when the pool gives up on the database).
    func value(within timeout: Duration) async throws -> Success {
        let outcome = FirstOutcome<Success>()
        return try await withCheckedThrowingContinuation { continuation in
            outcome.waiting(continuation)
            let timer = Task<Void, Never> {
                guard (try? await Task<Never, Never>.sleep(for: timeout)) != nil else { return }
                outcome.resume(with: .failure(Swift.CancellationError()))
            }
            Task<Void, Never> {
                let result: Result<Success, any Error>
                do { result = .success(try await self.value) } catch { result = .failure(error) }
                timer.cancel()
                outcome.resume(with: result)
            }
        }
    }
}

/// A continuation resumed once, by whichever outcome comes first.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<Value, any Error>?>(nil)

    func waiting(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(with result: Result<Value, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
}
