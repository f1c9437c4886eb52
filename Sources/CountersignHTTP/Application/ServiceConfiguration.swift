public import CountersignCrypto
public import CountersignPostgres

/// Everything `buildApplication` needs, filled from flags and environment by the executable.
public struct ServiceConfiguration: Sendable {
    /// Address to listen on. The default serves this machine only; containers set `0.0.0.0`.
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    public var database: PostgresConfiguration
    /// The operator key, which creates tenants. `nil` disables the operator API.
    public var operatorKey: OperatorKey?
    /// The key that seals each tenant's data key. `nil`: nothing that needs a secret works.
    public var masterKey: SymmetricKey?
    /// Largest request body accepted, in bytes.
    public var maxBodyBytes: Int = 1 << 20
    /// Where the `NNNN_name.sql` migration files are.
    public var migrationsDirectory: String
    /// Apply pending migrations before serving.
    public var migrateAtStart: Bool = true
    /// How long a verified API key is trusted without asking the database again. A key revoked
    /// on another instance keeps working there for at most this long; 0 asks every time.
    public var apiKeyCacheTTL: Duration = .seconds(2)
    /// How long a readiness answer is reused: a flood of probes costs the pool one check at most
    /// per period instead of a connection each.
    public var readinessCacheTTL: Duration = .seconds(1)
    /// Decision batches written at once at most, each on its own pool connection; keep it below
    /// the pool size. A writer beyond the first joins only when a batch's worth is waiting (see
    /// `DecisionWriter`).
    public var decisionWriters: Int = 2
    /// How long decision records and ended sessions are kept; `nil` keeps them for ever.
    public var retention: Duration? = .seconds(90 * 86_400)
    /// How often expired sessions are swept (their memory and `forSession` credentials dropped).
    public var sessionSweepInterval: Duration = .seconds(30)
    /// Whether the log says a shutdown began as soon as SIGTERM or SIGINT arrives. Watching sets
    /// both signals ignored for the whole process, as the service group serving it does anyway;
    /// a process that only embeds the service (tests) leaves them alone.
    public var announcesShutdownSignals: Bool = true

    public init(database: PostgresConfiguration, migrationsDirectory: String) {
        self.database = database
        self.migrationsDirectory = migrationsDirectory
    }
}
