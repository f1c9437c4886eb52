import ArgumentParser
import CountersignCore
import CountersignCrypto
import CountersignHTTP
import CountersignPostgres
import CountersignStorage
import Foundation
import Logging

/// Where the database is and how to talk to it: every command that uses it. Each option has an
/// environment variable; a flag given on the command line wins. Secrets (the database URL may
/// hold a password, the operator key) are read from the environment or a file, never shown as
/// defaults in --help.
///
/// Numeric options parse their value `.unconditional`ly: otherwise a negative number reads as a
/// short flag, and `--port -1` says "Missing value" instead of giving the range the value breaks.
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .customLong("database-url"),
        help: ArgumentHelp(
            "libpq connection string or URI. Env: COUNTERSIGN_DATABASE_URL. When neither is set, libpq's PG* variables apply (PGHOST, PGDATABASE, ...).",
            valueName: "conninfo"
        )
    )
    var databaseURL: String?

    @Option(parsing: .unconditional, help: "Database connections in the pool. Env: COUNTERSIGN_DB_POOL_SIZE.")
    var poolSize: Int = Environment.int("COUNTERSIGN_DB_POOL_SIZE") ?? 6

    @Option(parsing: .unconditional, help: "Statement timeout in milliseconds. Env: COUNTERSIGN_DB_STATEMENT_TIMEOUT_MS.")
    var statementTimeoutMs: Int = Environment.int("COUNTERSIGN_DB_STATEMENT_TIMEOUT_MS") ?? 5000

    @Option(parsing: .unconditional, help: "Longest wait for a free pool connection, in milliseconds. Env: COUNTERSIGN_DB_ACQUIRE_TIMEOUT_MS.")
    var acquireTimeoutMs: Int = Environment.int("COUNTERSIGN_DB_ACQUIRE_TIMEOUT_MS") ?? 5000

    @Option(help: "Directory of the NNNN_name.sql migration files. Env: COUNTERSIGN_MIGRATIONS_DIR.")
    var migrationsDir: String?

    func validate() throws {
        guard (1...64).contains(poolSize) else { throw ValidationError("--pool-size (COUNTERSIGN_DB_POOL_SIZE) must be between 1 and 64") }
        guard statementTimeoutMs > 0, acquireTimeoutMs > 0 else {
            throw ValidationError(
                "--statement-timeout-ms and --acquire-timeout-ms (COUNTERSIGN_DB_STATEMENT_TIMEOUT_MS, COUNTERSIGN_DB_ACQUIRE_TIMEOUT_MS) must be positive"
            )
        }
    }

    /// The connection string to use: the flag, else COUNTERSIGN_DATABASE_URL, else `fallback`.
    func postgresConfiguration(fallback: String = "") -> PostgresConfiguration {
        var configuration = PostgresConfiguration(connectionString: databaseURL ?? Environment.string("COUNTERSIGN_DATABASE_URL") ?? fallback)
        configuration.poolSize = poolSize
        configuration.statementTimeout = .milliseconds(statementTimeoutMs)
        configuration.acquireTimeout = .milliseconds(acquireTimeoutMs)
        return configuration
    }

    var isDatabaseConfigured: Bool {
        databaseURL != nil || Environment.string("COUNTERSIGN_DATABASE_URL") != nil
    }

    /// This release's migrations, from ``resolvedMigrationsDirectory()``: refused when they stop
    /// short of the schema this build needs.
    func migrations() throws -> [Migration] {
        try SchemaVersion.migrations(in: try resolvedMigrationsDirectory())
    }

    /// The migrations directory: the flag, the environment, else the first of the usual places
    /// that exists (the working directory, beside the executable, the source checkout).
    func resolvedMigrationsDirectory() throws -> String {
        if let explicit = migrationsDir ?? Environment.string("COUNTERSIGN_MIGRATIONS_DIR") { return explicit }
        // The running binary as the kernel knows it: `CommandLine.arguments[0]` is a bare name
        // when the shell found the binary on the PATH.
        let binary = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? Bundle.main.executablePath ?? CommandLine.arguments[0]
        let executable = URL(fileURLWithPath: binary).resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("migrations"),
            executable.appendingPathComponent("migrations"),
            executable.appendingPathComponent("../share/countersign/migrations"),
            // .build/<config>/countersign in a checkout
            executable.appendingPathComponent("../../migrations"),
            executable.appendingPathComponent("../../../migrations"),
        ]
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate.appendingPathComponent("0001_init.sql").path) {
            return candidate.standardizedFileURL.path
        }
        throw StartupError("cannot find the migrations directory; pass --migrations-dir or set COUNTERSIGN_MIGRATIONS_DIR")
    }
}

/// How the service records decisions and for how long it keeps them: `serve` and `dev`.
struct RecordingOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Decision batches committed at once at most (group commit), each on its own connection; another writer joins only when 16 decisions are waiting. Env: COUNTERSIGN_DECISION_WRITERS.")
    var decisionWriters: Int = Environment.int("COUNTERSIGN_DECISION_WRITERS") ?? 2

    @Option(parsing: .unconditional, help: "Days decision records and ended sessions are kept; 0 keeps them for ever. Env: COUNTERSIGN_RETENTION_DAYS.")
    var retentionDays: Int = Environment.int("COUNTERSIGN_RETENTION_DAYS") ?? 90

    func validate() throws {
        guard (0...36_500).contains(retentionDays) else {
            throw ValidationError("--retention-days (COUNTERSIGN_RETENTION_DAYS) must be between 0 (keep for ever) and 36500")
        }
    }

    /// Busy writers must leave the other requests at least one of the pool's connections.
    func validate(poolSize: Int) throws {
        guard (1...32).contains(decisionWriters), decisionWriters < poolSize else {
            throw ValidationError("--decision-writers (COUNTERSIGN_DECISION_WRITERS) must be between 1 and 32 and below --pool-size (COUNTERSIGN_DB_POOL_SIZE)")
        }
    }

    func apply(to configuration: inout ServiceConfiguration) {
        configuration.decisionWriters = decisionWriters
        configuration.retention = retentionDays == 0 ? nil : .seconds(retentionDays * 86_400)
    }
}

struct LoggingOptions: ParsableArguments {
    @Option(help: "trace, debug, info, notice, warning, error or critical. Env: COUNTERSIGN_LOG_LEVEL.")
    var logLevel: String = Environment.string("COUNTERSIGN_LOG_LEVEL") ?? "info"

    @Option(help: "text or json (one object per line). Env: COUNTERSIGN_LOG_FORMAT.")
    var logFormat: String = Environment.string("COUNTERSIGN_LOG_FORMAT") ?? "text"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level (COUNTERSIGN_LOG_LEVEL) '\(logLevel)'") }
        guard ["text", "json"].contains(logFormat) else { throw ValidationError("--log-format (COUNTERSIGN_LOG_FORMAT) must be text or json") }
    }

    /// Sets up swift-log for the process and returns the root logger.
    func bootstrap(label: String = "countersign") -> Logger {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let json = logFormat == "json"
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler(label: label) : TextLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: label)
    }
}

struct HTTPOptions: ParsableArguments {
    @Option(help: "Address to listen on. Env: COUNTERSIGN_HOST.")
    var host: String = Environment.string("COUNTERSIGN_HOST") ?? "127.0.0.1"

    @Option(parsing: .unconditional, help: "Port to listen on. Env: COUNTERSIGN_PORT.")
    var port: Int = Environment.int("COUNTERSIGN_PORT") ?? 8080

    @Option(
        help: "File holding the operator key (at least 32 characters). Env: COUNTERSIGN_OPERATOR_KEY_FILE, or the key itself in COUNTERSIGN_OPERATOR_KEY."
    )
    var operatorKeyFile: String?

    @Option(
        help: "File holding the 32-byte master key (raw, base64 or hex) that seals tenant data keys. Env: COUNTERSIGN_MASTER_KEY_FILE."
    )
    var masterKeyFile: String?

    @Option(parsing: .unconditional, help: "Largest request body in bytes. Env: COUNTERSIGN_MAX_BODY_BYTES.")
    var maxBodyBytes: Int = Environment.int("COUNTERSIGN_MAX_BODY_BYTES") ?? 1 << 20

    @Option(parsing: .unconditional, help: "Seconds a verified API key is trusted before the database is asked again. Env: COUNTERSIGN_API_KEY_CACHE_SECONDS.")
    var apiKeyCacheSeconds: Double = Environment.double("COUNTERSIGN_API_KEY_CACHE_SECONDS") ?? 2

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port (COUNTERSIGN_PORT) must be between 1 and 65535") }
        guard maxBodyBytes >= 1024 else { throw ValidationError("--max-body-bytes (COUNTERSIGN_MAX_BODY_BYTES) must be at least 1024") }
        // While an instance cannot hear of revocations made through another, they take up to this
        // long to reach it.
        guard (0...Double(APIKeyStore.longestCacheSeconds)).contains(apiKeyCacheSeconds) else {
            throw ValidationError("--api-key-cache-seconds (COUNTERSIGN_API_KEY_CACHE_SECONDS) must be between 0 and \(APIKeyStore.longestCacheSeconds)")
        }
    }

    /// The operator key from the file flag, COUNTERSIGN_OPERATOR_KEY_FILE or COUNTERSIGN_OPERATOR_KEY.
    func operatorKey() throws -> OperatorKey? {
        if let path = operatorKeyFile ?? Environment.string("COUNTERSIGN_OPERATOR_KEY_FILE") {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                let files = FileManager.default
                let reason =
                    !files.fileExists(atPath: path) ? "no such file"
                    : !files.isReadableFile(atPath: path) ? "permission denied" : "not UTF-8 text"
                throw StartupError("cannot read the operator key file \(path): \(reason)")
            }
            return try Self.operatorKey(text, from: "the operator key file \(path)")
        }
        return try Environment.string("COUNTERSIGN_OPERATOR_KEY").map { try Self.operatorKey($0, from: "COUNTERSIGN_OPERATOR_KEY") }
    }

    private static func operatorKey(_ text: String, from source: String) throws -> OperatorKey {
        do {
            return try OperatorKey(text)
        } catch let error as CountersignError {
            throw StartupError("\(source) holds no usable operator key: \(error.message)")
        }
    }

    func apply(to configuration: inout ServiceConfiguration) throws {
        configuration.host = host
        configuration.port = port
        configuration.maxBodyBytes = maxBodyBytes
        configuration.apiKeyCacheTTL = .milliseconds(Int(apiKeyCacheSeconds * 1000))
        configuration.operatorKey = try operatorKey()
        if let path = masterKeyFile ?? Environment.string("COUNTERSIGN_MASTER_KEY_FILE") {
            do {
                configuration.masterKey = try MasterKey.load(fromFile: path)
            } catch {
                throw StartupError("cannot use the master key file \(path): \(error)")
            }
        }
    }
}
