import CountersignPostgres
import Logging
import ServiceLifecycle

/// Applies pending migrations before the server accepts requests. With the database out of
/// reach it lets the service start anyway, unready (`/readyz` says the schema is behind until
/// they are applied), and applies them once the database is back, as an instance started with
/// `--no-migrate` waits for it: a container restarted while the database is away (a rollout
/// during a failover) serves its probes rather than crash-looping. Any other failure (a refused
/// migration, a changed file) still stops the service.
struct MigrationsAtStart: Service, CustomStringConvertible {
    let migrations: MigrationRunner
    let pool: PostgresPool
    let logger: Logger
    /// Whether the start-up attempt left the migrations to `run()`, said once, by the prelude.
    private let deferral = AsyncStream.makeStream(of: Bool.self)

    /// Pauses between attempts while the database stays away.
    static let pauses: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(5)]
    /// Attempts between two warnings that the database is still away: about a minute.
    static let attemptsBetweenWarnings = 12

    /// ServiceLifecycle logs each service it starts as this: the default, every field, printed
    /// every migration's SQL in one line of about 70 KB.
    var description: String { "MigrationsAtStart" }

    init(migrations: MigrationRunner, pool: PostgresPool, logger: Logger) {
        self.migrations = migrations
        self.pool = pool
        self.logger = logger
    }

    /// The server's prelude: applies them, or leaves them to `run()`.
    func applyBeforeServing() async throws {
        do {
            try await apply()
            deferral.continuation.yield(false)
        } catch let error as PostgresError where Self.isUnreachable(error) {
            logger.warning(
                "cannot reach the database to apply migrations; serving, unready, and applying them once it is back",
                metadata: ["error": "\(String(reflecting: error))"]
            )
            deferral.continuation.yield(true)
        }
        deferral.continuation.finish()
    }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                var words = deferral.stream.makeAsyncIterator()
                guard await words.next() == true else { return }
                for attempt in 0... {
                    try await Task.sleep(for: Self.pauses[min(attempt, Self.pauses.count - 1)])
                    do {
                        try await apply()
                        return
                    } catch let error as PostgresError where Self.isUnreachable(error) {
                        // A wrong address or password fails the same way for ever: said again
                        // every minute or so, not only once at start.
                        let level: Logger.Level = attempt % Self.attemptsBetweenWarnings == Self.attemptsBetweenWarnings - 1 ? .warning : .debug
                        logger.log(level: level, "still cannot apply the migrations: the database is out of reach", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
            }
        } catch is CancellationError {
            // Stopped while waiting for the database: a shutdown, not a failure (exit status 0).
            return
        }
        // A service that returns ends the group: this one stays until the service stops.
        try? await gracefulShutdown()
    }

    private func apply() async throws {
        let applied = try await migrations.migrate(on: pool, logger: logger)
        if !applied.isEmpty {
            logger.notice("migrations applied", metadata: ["versions": "\(applied.map(\.version))"])
        }
    }

    /// A database away for now: no connection (refused, lost, or none free in time while
    /// requests hold them), or one that takes no writes (a standby during a failover).
    private static func isUnreachable(_ error: PostgresError) -> Bool {
        [.connectionFailed, .connectionLost, .poolTimeout].contains(error.code) || error.isWriteUnavailable
    }
}
