import CountersignCore
@testable import CountersignPostgres
import CountersignTestSupport
import Foundation
import Logging
import Testing

/// Migrations: loading files, applying each exactly once, refusing a changed history.
@Suite("Migrations")
struct MigrationTests {
    static let base = [
        Migration(version: 1, name: "init", sql: "CREATE TABLE accounts (id int PRIMARY KEY, name text NOT NULL);"),
        Migration(
            version: 2,
            name: "events",
            sql: """
                CREATE TABLE events (id serial PRIMARY KEY, kind text NOT NULL);
                INSERT INTO events (kind) VALUES ('migration 2 ran');
                """
        ),
        Migration(version: 3, name: "index", sql: "CREATE INDEX accounts_name ON accounts (name);"),
    ]

    private func makeDirectory(_ files: [String: String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, text) in files {
            try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
        }
        return directory
    }

    private func withPool(_ body: (PostgresPool, String) async throws -> Void) async throws {
        try await Fixtures.withFreshPool(poolSize: 2, body)
    }

    @discardableResult
    private func expectCode(_ code: CountersignError.Code, _ body: () async throws -> Void) async -> CountersignError? {
        do {
            try await body()
            Issue.record("expected \(code)")
        } catch let error as CountersignError {
            #expect(error.code == code, "\(error)")
            return error
        } catch {
            Issue.record("expected \(code), got \(String(reflecting: error))")
        }
        return nil
    }

    @Test("load reads NNNN_name.sql files in version order and ignores others")
    func load() throws {
        let directory = try makeDirectory([
            "0002_second.sql": "SELECT 2;",
            "0001_first.sql": "SELECT 1;",
            "0010_tenth-one.sql": "SELECT 10;",
            "README.md": "not a migration",
            "notes.txt": "neither",
        ])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let migrations = try MigrationRunner.load(directory: directory)
        #expect(migrations.map(\.version) == [1, 2, 10])
        #expect(migrations.map(\.name) == ["first", "second", "tenth-one"])
        #expect(migrations[0].sql == "SELECT 1;")
        #expect(migrations[0].fileName == "0001_first.sql")
        #expect(migrations[0].checksum.count == 64)
    }

    @Test("load refuses duplicate versions and misnamed files")
    func loadRefuses() async throws {
        let duplicates = try makeDirectory(["0001_a.sql": "SELECT 1;", "1_b.sql": "SELECT 1;"])
        defer { try? FileManager.default.removeItem(atPath: duplicates) }
        await expectCode(.migrationDuplicateVersion) { _ = try MigrationRunner.load(directory: duplicates) }

        let misnamed = try makeDirectory(["0001_bad name.sql": "SELECT 1;"])
        defer { try? FileManager.default.removeItem(atPath: misnamed) }
        await expectCode(.migrationUnreadable) { _ = try MigrationRunner.load(directory: misnamed) }

        await expectCode(.migrationUnreadable) { _ = try MigrationRunner.load(directory: "/nonexistent/migrations") }
    }

    @Test("migrate applies pending migrations once, and pendingMigrations follows")
    func migrateAndPending() async throws {
        try await withPool { pool, _ in
            let runner = MigrationRunner(migrations: Self.base)
            #expect(try await runner.pendingMigrations(on: pool).map(\.version) == [1, 2, 3])

            let partial = MigrationRunner(migrations: Array(Self.base.prefix(2)))
            #expect(try await partial.migrate(on: pool, logger: Fixtures.logger).map(\.version) == [1, 2])
            #expect(try await runner.pendingMigrations(on: pool).map(\.version) == [3])

            #expect(try await runner.migrate(on: pool, logger: Fixtures.logger).map(\.version) == [3])
            #expect(try await runner.pendingMigrations(on: pool).isEmpty)
            #expect(try await runner.migrate(on: pool, logger: Fixtures.logger).isEmpty)

            let recorded = try await pool.withConnection { connection in
                try connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version").map {
                    "\(try $0.decode("version", as: Int.self)):\(try $0.decode("name", as: String.self)):\(try $0.decode("checksum", as: String.self))"
                }
            }
            #expect(recorded == Self.base.map { "\($0.version):\($0.name):\($0.checksum)" })
        }
    }

    @Test("two runners on two pools at once apply every migration exactly once")
    func concurrentRunners() async throws {
        let connectionString = try await TestDatabase.freshDatabase()
        let pools = (0..<2).map { _ in
            PostgresPool(configuration: Fixtures.configuration(connectionString, poolSize: 2), logger: Fixtures.logger)
        }
        let runner = MigrationRunner(migrations: Self.base)
        async let first = runner.migrate(on: pools[0], logger: Fixtures.logger)
        async let second = runner.migrate(on: pools[1], logger: Fixtures.logger)
        let (a, b) = try await (first, second)

        #expect(Set(a.map(\.version)).isDisjoint(with: b.map(\.version)))
        #expect((a + b).map(\.version).sorted() == [1, 2, 3])
        let (recorded, ran) = try await pools[0].withConnection { connection in
            (
                try connection.query("SELECT count(*) AS n FROM schema_migrations").first!.decode("n", as: Int.self),
                try connection.query("SELECT count(*) AS n FROM events").first!.decode("n", as: Int.self)
            )
        }
        #expect(recorded == 3)
        #expect(ran == 1)
        for pool in pools { await pool.close() }
    }

    @Test("a changed applied migration is refused before anything runs")
    func changedFileRefused() async throws {
        try await withPool { pool, _ in
            _ = try await MigrationRunner(migrations: Array(Self.base.prefix(2))).migrate(on: pool, logger: Fixtures.logger)

            var changed = Self.base
            changed[0] = Migration(version: 1, name: "init", sql: "CREATE TABLE accounts (id bigint PRIMARY KEY);")
            let runner = MigrationRunner(migrations: changed)
            let error = await expectCode(.migrationChecksumMismatch) {
                _ = try await runner.migrate(on: pool, logger: Fixtures.logger)
            }
            #expect(error?.message.contains("migration 1") == true)
            #expect(error?.message.contains("0001_init.sql") == true)
            await expectCode(.migrationChecksumMismatch) { _ = try await runner.pendingMigrations(on: pool) }

            // Migration 3 was pending, but nothing ran.
            let indexExists = try await pool.withConnection { connection in
                try connection.query("SELECT to_regclass('accounts_name') IS NOT NULL AS v").first!.decode("v", as: Bool.self)
            }
            #expect(!indexExists)
        }
    }

    @Test("a database a newer release migrated is served as it is")
    func newerDatabase() async throws {
        try await withPool { pool, _ in
            _ = try await MigrationRunner(migrations: Self.base).migrate(on: pool, logger: Fixtures.logger)
            let older = MigrationRunner(migrations: Array(Self.base.prefix(2)))
            #expect(try await older.migrate(on: pool, logger: Fixtures.logger).isEmpty)
            #expect(try await older.pendingMigrations(on: pool).isEmpty)
            #expect(try await older.newerVersions(on: pool).map(\.version) == [3])
        }
    }

    @Test("a removed migration file, or a migration added out of order, is reported")
    func historyProblems() async throws {
        try await withPool { pool, _ in
            _ = try await MigrationRunner(migrations: Self.base).migrate(on: pool, logger: Fixtures.logger)
            let withoutTheSecond = MigrationRunner(migrations: [Self.base[0], Self.base[2]])
            let error = await expectCode(.migrationUnknownVersion) {
                _ = try await withoutTheSecond.migrate(on: pool, logger: Fixtures.logger)
            }
            #expect(error?.message.contains("migration 2") == true)
        }
        try await withPool { pool, _ in
            _ = try await MigrationRunner(migrations: [Self.base[0], Self.base[2]]).migrate(on: pool, logger: Fixtures.logger)
            await expectCode(.migrationOutOfOrder) {
                _ = try await MigrationRunner(migrations: Self.base).migrate(on: pool, logger: Fixtures.logger)
            }
        }
    }

    @Test("a failing migration is rolled back whole and not recorded, and said with the server's message")
    func failingMigration() async throws {
        try await withPool { pool, _ in
            let broken = [
                Self.base[0],
                Migration(version: 2, name: "broken", sql: "CREATE TABLE half (n int); SELECT 1 / 0;"),
            ]
            let error = await expectCode(.migrationFailed) {
                _ = try await MigrationRunner(migrations: broken).migrate(on: pool, logger: Fixtures.logger)
            }
            #expect(error?.message == "a database migration failed: division by zero (SQLSTATE 22012)")
            let (versions, half) = try await pool.withConnection { connection in
                (
                    try connection.query("SELECT version FROM schema_migrations").map { try $0.decode("version", as: Int.self) },
                    try connection.query("SELECT to_regclass('half') IS NOT NULL AS v").first!.decode("v", as: Bool.self)
                )
            }
            #expect(versions == [1])
            #expect(!half)
        }
    }

    /// A connection lost mid-migration (a failover terminates backends, 57P01) and a database that
    /// takes no writes now (a standby, 25006) are a database away, which the service waits for at
    /// start, not a migration the database refused, which stops it.
    @Test(
        "a database away during a migration stays a PostgresError",
        arguments: [
            "SELECT pg_terminate_backend(pg_backend_pid());",
            "SET transaction_read_only = on; CREATE TABLE refused (id int);",
        ]
    )
    func databaseAwayIsNoRefusal(sql: String) async throws {
        try await withPool { pool, _ in
            let failing = [Self.base[0], Migration(version: 2, name: "away", sql: sql)]
            do {
                _ = try await MigrationRunner(migrations: failing).migrate(on: pool, logger: Fixtures.logger)
                Issue.record("expected the migration to fail")
            } catch let error as PostgresError {
                #expect(error.code == .connectionLost || error.isWriteUnavailable, "\(String(reflecting: error))")
            }
        }
    }

    /// A table held by another session (a pg_dump, a long transaction) makes the migration give
    /// way after `lock_timeout` and try again, instead of queueing every statement on the table
    /// behind it; held through every try, the start fails and says why.
    @Test("a migration waiting for a lock gives way and tries again")
    func lockWaitsGiveWay() async throws {
        try await Fixtures.withFreshPool(poolSize: 2) { pool, connectionString in
            _ = try await MigrationRunner(migrations: [Self.base[0]]).migrate(on: pool, logger: Fixtures.logger)
            let alter = Migration(version: 2, name: "alter", sql: "ALTER TABLE accounts ADD COLUMN note text;")
            let side = PostgresPool(configuration: Fixtures.configuration(connectionString, poolSize: 1), logger: Fixtures.logger)
            func holdingAccounts(for seconds: Double) -> Task<Void, any Error> {
                Task {
                    try await side.withTransaction { connection in
                        try connection.liftStatementTimeout()
                        try connection.simpleQuery("LOCK TABLE accounts IN ACCESS SHARE MODE; SELECT pg_sleep(\(seconds))")
                    }
                }
            }
            func waitUntilHeld() async throws {
                let held = try await eventually(timeout: .seconds(20)) {
                    try await pool.withConnection { connection in
                        try connection.query("SELECT count(*)::int8 AS n FROM pg_locks WHERE relation = 'accounts'::regclass AND granted").rows[0].decode("n", as: Int.self)
                    } > 0
                }
                try #require(held, "the side connection never took its lock")
            }
            func letGo() async throws {
                _ = try await pool.withConnection { connection in
                    try connection.query("SELECT pg_cancel_backend(pid) FROM pg_locks WHERE relation = 'accounts'::regclass AND granted")
                }
            }

            let throughEveryTry = holdingAccounts(for: 60)
            try await waitUntilHeld()
            let refused = await expectCode(.migrationFailed) {
                _ = try await MigrationRunner(migrations: [Self.base[0], alter], lockWaitPauses: [.milliseconds(100)]).migrate(on: pool, logger: Fixtures.logger)
            }
            #expect(refused?.message.contains("could not take the locks it needs") == true, "\(String(describing: refused))")
            try await letGo()
            _ = try? await throughEveryTry.value

            // Held until the migration has given way once: then it takes the table at a later try.
            let untilGivenWay = holdingAccounts(for: 60)
            try await waitUntilHeld()
            let lines = LogLines()
            let migrating = Task {
                try await MigrationRunner(migrations: [Self.base[0], alter], lockWaitPauses: Array(repeating: .milliseconds(500), count: 60))
                    .migrate(on: pool, logger: Logger(label: "countersign.test.migrations") { _ in RecordingLogHandler(into: lines) })
            }
            let gaveWay = await eventually(timeout: .seconds(20)) { lines.all.contains { $0.contains("trying again") } }
            #expect(gaveWay, "the migration waited on the lock instead of giving way")
            try await letGo()
            _ = try? await untilGivenWay.value
            #expect(try await migrating.value.map(\.version) == [2])
            await side.close()
        }
    }

    @Test("a long migration is not cut off by the pool's statement timeout")
    func noStatementTimeout() async throws {
        try await Fixtures.withFreshPool(poolSize: 1, statementTimeout: .milliseconds(100)) { pool, _ in
            let slow = Migration(version: 1, name: "slow", sql: "SELECT pg_sleep(0.3); CREATE TABLE after_sleep (n int);")
            let applied = try await MigrationRunner(migrations: [slow]).migrate(on: pool, logger: Fixtures.logger)
            #expect(applied.count == 1)
        }
    }

    @Test("checksums are SHA-256 of the UTF-8 text, as PostgreSQL computes it")
    func checksumMatchesPostgres() async throws {
        try await withPool { pool, _ in
            let texts = ["", "abc", "CREATE TABLE ü (\"✓\" text);\n", String(repeating: "0123456789", count: 1000)]
            for text in texts {
                let expected = try await pool.withConnection { connection in
                    try connection.query("SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex') AS v", [.text(text)])
                        .first!.decode("v", as: String.self)
                }
                #expect(Migration(version: 1, name: "x", sql: text).checksum == expected)
            }
        }
    }
}
