import CountersignCore
public import CountersignPostgres

/// The database schema this build's SQL is written against.
public enum SchemaVersion {
    /// The newest migration this build's SQL needs: an instance given a migrations directory
    /// that stops short of it (empty, mistyped, or an older release's) would otherwise migrate
    /// to that older schema, say it is ready, and fail every request. Raise it with every new
    /// migration file (a test checks it against `migrations/`).
    public static let required = 28

    /// The migrations in `directory`, refused when they stop short of ``required``.
    public static func migrations(in directory: String) throws -> [Migration] {
        let migrations = try MigrationRunner.load(directory: directory)
        try check(migrations, from: directory)
        return migrations
    }

    /// Refuses `migrations`, read from `directory`, when they stop short of ``required``.
    public static func check(_ migrations: [Migration], from directory: String) throws {
        let newest = migrations.map(\.version).max() ?? 0
        guard newest >= required else {
            throw CountersignError(
                .migrationsIncomplete,
                "the migrations directory \(directory) holds migrations up to version \(newest); this build needs \(required): give it this release's migrations (--migrations-dir, COUNTERSIGN_MIGRATIONS_DIR)"
            )
        }
    }
}
