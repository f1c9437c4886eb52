import ArgumentParser
import CountersignPostgres
import Logging

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending database migrations and exit.",
        discussion: """
            Safe to run from several instances at once: each file is applied in its own transaction \
            under a PostgreSQL advisory lock, exactly once. A file changed after it was applied is \
            refused.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Flag(help: "Only list the pending migrations.")
    var dryRun = false

    func run() async throws {
        let logger = logging.bootstrap()
        let runner = MigrationRunner(migrations: try database.migrations())
        let configuration = database.postgresConfiguration()
        let pool = PostgresPool(configuration: configuration, logger: logger)
        let report: String
        do {
            if dryRun {
                let pending = try await runner.pendingMigrations(on: pool)
                report = pending.isEmpty ? "no pending migrations" : pending.map { "pending \($0.version) \($0.name)" }.joined(separator: "\n")
            } else {
                let applied = try await runner.migrate(on: pool, logger: logger)
                report = applied.isEmpty ? "already up to date" : applied.map { "applied \($0.version) \($0.name)" }.joined(separator: "\n")
            }
        } catch let error as PostgresError where error.code == .connectionFailed {
            await pool.close()
            throw StartupError.unreachable(configuration, error)
        } catch {
            await pool.close()
            throw error
        }
        await pool.close()
        print(report)
    }
}
