import CountersignCore
import Foundation
public import Logging

/// Applies ``Migration``s to a database, each exactly once, safely from several instances
/// starting at the same time.
///
/// Each migration runs in its own transaction, which first takes a transaction-level
/// advisory lock (``advisoryLockKey``), creates `schema_migrations` if needed, re-reads what
/// is applied, runs the SQL and records the version with the file's checksum. A second
/// instance waits on the lock and then finds the work done.
///
/// Before anything runs, the recorded history is checked against the files. Problems with
/// the files or the history throw `CountersignError` (codes `migration_checksum_mismatch`,
/// `migration_unknown_version`, `migration_out_of_order`, `migration_duplicate_version`,
/// `migration_unreadable`); database failures pass through as ``PostgresError``.
public struct MigrationRunner: Sendable {
    /// The `pg_advisory_xact_lock` key every runner takes: ASCII "cntrsign".
    public static let advisoryLockKey: Int64 = 0x636E_7472_7369_676E

    /// The migrations, sorted by version.
    public let migrations: [Migration]
    /// The pauses before a migration that timed out waiting for a lock tries again; the start
    /// fails once they are used up.
    let lockWaitPauses: [Duration]

    /// A runner for `migrations` (sorted here; duplicate versions are refused when run).
    public init(migrations: [Migration]) {
        self.init(migrations: migrations, lockWaitPauses: Self.lockWaitPauses)
    }

    init(migrations: [Migration], lockWaitPauses: [Duration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.lockWaitPauses = lockWaitPauses
    }

    /// Runs `body`, turning a refusal by the server into `migration_failed` with the server's
    /// message, which an operator needs ("permission denied for schema public") and which a
    /// migration's own statements do not fill with secrets. Anything else stays a `PostgresError`:
    /// a connection lost or refused (which carries a SQLSTATE too, 08006 or 57P01 in a failover),
    /// or a database that cannot take writes now (a standby, a full disk), is a database away,
    /// which callers tell apart and wait for at start-up.
    static func explainingRefusals<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresError where error.code == .queryFailed && !error.isWriteUnavailable && !error.isLockNotAvailable {
            var message = error.serverMessage ?? "the database refused it"
            if let state = error.sqlState { message += " (SQLSTATE \(state))" }
            throw CountersignError(.migrationFailed, "a database migration failed: \(message)")
        }
    }

    /// Reads the `NNNN_name.sql` files of `directory`, sorted by version.
    ///
    /// Files not ending in `.sql` are ignored; a `.sql` file that starts with a digit but is
    /// not named `NNNN_name.sql`, an unreadable file or two files with one version throw.
    public static func load(directory: String) throws -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw CountersignError(.migrationUnreadable, "cannot list the migrations directory \(directory)")
        }
        var migrations: [Migration] = []
        for name in names.sorted() where name.hasSuffix(".sql") {
            guard Migration.parse(fileName: name) != nil else {
                // A misnamed migration would silently never run: refuse what looks like one.
                if name.first?.isNumber == true {
                    throw CountersignError(
                        .migrationUnreadable,
                        "migration file \"\(name)\" is not named NNNN_name.sql (name: letters, digits, _ or -)"
                    )
                }
                continue
            }
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path),
                let sql = String(data: data, encoding: .utf8)
            else {
                throw CountersignError(.migrationUnreadable, "cannot read migration file \(name) as UTF-8 text")
            }
            migrations.append(try Migration(fileName: name, sql: sql))
        }
        migrations.sort { $0.version < $1.version }
        try checkUniqueVersions(migrations)
        return migrations
    }

    /// Applies every pending migration, in version order, and returns the ones this call
    /// applied (empty if another instance did them, or nothing was pending).
    public func migrate(on pool: PostgresPool, logger: Logger) async throws -> [Migration] {
        try Self.checkUniqueVersions(migrations)
        var applied: [Migration] = []
        var lockWaits = 0
        while true {
            let migrations = self.migrations
            let step: Migration?
            do {
                step = try await Self.explainingRefusals { try await applyNext(of: migrations, on: pool, logger: logger) }
            } catch let error as PostgresError where error.isLockNotAvailable {
                // A table the migration must lock is held (a pg_dump, a long transaction): waiting
                // on it would queue every instance's statements on that table behind the
                // migration, so it gives way and tries again.
                guard lockWaits < lockWaitPauses.count else {
                    throw CountersignError(
                        .migrationFailed,
                        "a database migration could not take the locks it needs: another session held them through \(lockWaits + 1) tries; "
                            + "find it in pg_locks and pg_stat_activity, then start again"
                    )
                }
                logger.warning(
                    "a database migration waits for a lock another session holds; trying again",
                    metadata: ["migration.retry": "\(lockWaits + 1)", "migration.pause": "\(lockWaitPauses[lockWaits])"]
                )
                try await Task.sleep(for: lockWaitPauses[lockWaits])
                lockWaits += 1
                continue
            }
            guard let step else { break }
            applied.append(step)
        }
        if let newer = try await newerVersions(on: pool).first {
            logger.notice(
                "the database schema is newer than this build; serving it as it is",
                metadata: ["migration.version": "\(newer.version)", "migration.name": "\(newer.name)", "migration.known": "\(migrations.last?.version ?? 0)"]
            )
        } else if applied.isEmpty {
            logger.debug("database schema is up to date", metadata: ["migration.count": "\(migrations.count)"])
        } else {
            logger.info("applied database migrations", metadata: ["migration.applied": "\(applied.count)"])
        }
        return applied
    }

    /// The longest a migration's statement waits for a lock on what it changes, and by default the
    /// pauses before it tries again (about two minutes in all, then the start fails).
    static let lockTimeout = "2s"
    static let lockWaitPauses: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(15), .seconds(15), .seconds(15), .seconds(15), .seconds(15), .seconds(15)]

    /// Applies the first migration not applied yet, in its own transaction; `nil` when none is left.
    private func applyNext(of migrations: [Migration], on pool: PostgresPool, logger: Logger) async throws -> Migration? {
        try await pool.withTransaction { connection in
            // A migration may rightly take longer than the service's statement timeout,
            // and so may waiting for another instance's migration.
            try connection.liftStatementTimeout()
            _ = try connection.query("SELECT pg_advisory_xact_lock($1)", [.int(Self.advisoryLockKey)])
            try connection.simpleQuery("SET LOCAL lock_timeout = '\(Self.lockTimeout)'")
            try connection.simpleQuery(Self.createTableSQL)
            let history = try Self.readHistory(connection)
            guard let next = try Self.plan(migrations: migrations, applied: history).first else {
                return nil
            }
            logger.info(
                "applying database migration",
                metadata: ["migration.version": "\(next.version)", "migration.name": "\(next.name)"]
            )
            do {
                try connection.simpleQuery(next.sql)
            } catch let error as PostgresError where error.isLockNotAvailable {
                throw error
            } catch {
                logger.error(
                    "database migration failed",
                    metadata: [
                        "migration.version": "\(next.version)", "migration.name": "\(next.name)", "error": "\(error)",
                    ]
                )
                throw error
            }
            try connection.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                [.int(next.version), .text(next.name), .text(next.checksum)]
            )
            return next
        }
    }

    /// The applied migrations after this build's last, newest first: a newer release's.
    func newerVersions(on pool: PostgresPool) async throws -> [AppliedMigration] {
        let lastKnown = migrations.last?.version ?? 0
        return try await pool.withConnection { connection in
            try Self.readHistory(connection).filter { $0.version > lastKnown }.sorted { $0.version > $1.version }
        }
    }

    /// The migrations not yet applied (all of them if `schema_migrations` does not exist),
    /// after the same history checks as ``migrate(on:logger:)``. For readiness checks.
    public func pendingMigrations(on pool: PostgresPool) async throws -> [Migration] {
        try Self.checkUniqueVersions(migrations)
        let migrations = self.migrations
        return try await pool.withConnection { connection in
            let present = try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
            let history = try present.first?.decode("present", as: Bool.self) == true ? Self.readHistory(connection) : []
            return try Self.plan(migrations: migrations, applied: history)
        }
    }

    // MARK: - Planning (pure)

    /// One row of `schema_migrations`.
    struct AppliedMigration: Sendable, Hashable {
        var version: Int
        var name: String
        var checksum: String
    }

    /// The migrations still to apply, in order, after checking the recorded history against
    /// the files: every applied version up to the last file's has a file with the same
    /// checksum, and nothing pending sorts before something applied.
    ///
    /// Versions after the last file's are a newer release's: every migration leaves the
    /// previous release working (README, Operating it), so a database ahead of this build
    /// is served as it is, and an instance of the previous release can still restart, or
    /// be rolled back to, during an upgrade.
    static func plan(migrations: [Migration], applied: [AppliedMigration]) throws(CountersignError) -> [Migration] {
        try checkUniqueVersions(migrations)
        var files: [Int: Migration] = [:]
        for migration in migrations { files[migration.version] = migration }
        let lastKnown = migrations.last?.version ?? 0

        for record in applied.sorted(by: { $0.version < $1.version }) where record.version <= lastKnown {
            guard let file = files[record.version] else {
                throw CountersignError(
                    .migrationUnknownVersion,
                    "the database has migration \(record.version) (\(record.name)) applied, which no migration file "
                        + "describes: the file was removed"
                )
            }
            guard file.checksum == record.checksum else {
                throw CountersignError(
                    .migrationChecksumMismatch,
                    "migration \(record.version) (\(file.fileName)) changed after it was applied "
                        + "(recorded checksum \(record.checksum.prefix(12))..., file \(file.checksum.prefix(12))...): "
                        + "restore the applied text and put the change in a new migration"
                )
            }
        }

        let appliedVersions = Set(applied.map(\.version))
        let pending = migrations.filter { !appliedVersions.contains($0.version) }
        if let latest = appliedVersions.max(), let early = pending.first(where: { $0.version < latest }) {
            throw CountersignError(
                .migrationOutOfOrder,
                "migration \(early.version) (\(early.fileName)) is not applied but the later migration \(latest) is: "
                    + "renumber it above \(latest)"
            )
        }
        return pending
    }

    private static func checkUniqueVersions(_ migrations: [Migration]) throws(CountersignError) {
        var seen: [Int: String] = [:]
        for migration in migrations {
            if let other = seen[migration.version] {
                throw CountersignError(
                    .migrationDuplicateVersion,
                    "migrations \(other) and \(migration.fileName) share version \(migration.version)"
                )
            }
            seen[migration.version] = migration.fileName
        }
    }

    // MARK: - SQL

    private static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version int PRIMARY KEY,
            name text NOT NULL,
            checksum text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """

    private static func readHistory(_ connection: PostgresConnection) throws -> [AppliedMigration] {
        try connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version").map { row in
            AppliedMigration(
                version: try row.decode("version"),
                name: try row.decode("name"),
                checksum: try row.decode("checksum")
            )
        }
    }
}
