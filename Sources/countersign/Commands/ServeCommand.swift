import ArgumentParser
import CountersignHTTP
import Hummingbird
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the Countersign API against a PostgreSQL database.",
        discussion: """
            Environment variables (flags win):
              COUNTERSIGN_DATABASE_URL       libpq connection string or URI
                                             (or libpq's PG* variables)
              COUNTERSIGN_HOST, COUNTERSIGN_PORT
              COUNTERSIGN_OPERATOR_KEY_FILE  file holding the operator key
                                             (or COUNTERSIGN_OPERATOR_KEY)
              COUNTERSIGN_MASTER_KEY_FILE    file holding the 32-byte master key
                                             that wraps tenant data keys
              COUNTERSIGN_DB_POOL_SIZE, COUNTERSIGN_DB_STATEMENT_TIMEOUT_MS,
              COUNTERSIGN_DB_ACQUIRE_TIMEOUT_MS
              COUNTERSIGN_DECISION_WRITERS
              COUNTERSIGN_RETENTION_DAYS     0 keeps records for ever
              COUNTERSIGN_MIGRATIONS_DIR, COUNTERSIGN_AUTO_MIGRATE (true/false)
              COUNTERSIGN_MAX_BODY_BYTES, COUNTERSIGN_API_KEY_CACHE_SECONDS
              COUNTERSIGN_LOG_LEVEL, COUNTERSIGN_LOG_FORMAT (text/json)

            SIGTERM or SIGINT stops accepting connections, finishes requests in \
            flight, then closes the pool.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var recording: RecordingOptions
    @OptionGroup var http: HTTPOptions
    @OptionGroup var logging: LoggingOptions

    @Flag(inversion: .prefixedNo, help: "Apply pending migrations before serving. Env: COUNTERSIGN_AUTO_MIGRATE.")
    var migrate: Bool = Environment.bool("COUNTERSIGN_AUTO_MIGRATE") ?? true

    func validate() throws {
        // The option groups checked themselves as they were read, the pool size among them.
        try recording.validate(poolSize: database.poolSize)
    }

    func run() async throws {
        let logger = logging.bootstrap()
        var configuration = ServiceConfiguration(
            database: database.postgresConfiguration(),
            migrationsDirectory: try database.resolvedMigrationsDirectory()
        )
        try http.apply(to: &configuration)
        configuration.migrateAtStart = migrate
        recording.apply(to: &configuration)
        if configuration.operatorKey == nil {
            logger.warning("no operator key configured: the tenant API is disabled")
        }
        if configuration.masterKey == nil {
            logger.warning("no master key configured (COUNTERSIGN_MASTER_KEY_FILE): credentials cannot be stored or released")
        }
        try ListenAddress.checkAvailable(host: configuration.host, port: configuration.port)
        let app = try buildApplication(configuration, logger: logger)
        try await app.runService()
    }
}
