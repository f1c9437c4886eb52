extension LocalPostgresCluster {
    /// How a local cluster is created and run.
    public struct Options: Sendable, Hashable {
        /// The port number. It only names the socket file (`.s.PGSQL.<port>`): no TCP port
        /// is opened, so clusters in different directories can all use 5432. Default: 5432.
        public var port: Int
        /// Whether writes survive a crash of the machine. `false` turns off `fsync`,
        /// `synchronous_commit` and `full_page_writes` (and syncing in `initdb`): much
        /// faster, fine for throwaway test clusters, never for data you keep. Default: true.
        public var durable: Bool
        /// `max_connections`. Default: 100.
        public var maxConnections: Int
        /// The superuser `initdb` creates and connection strings use. Default: `"postgres"`.
        public var superuser: String
        /// Statements that take longer, and lock waits longer than a second, are written to the
        /// server log (`postgresql.log`): the statement's text, never its parameters, which may be
        /// secrets. `nil`, the default: neither.
        public var slowStatementThreshold: Duration?

        public init(
            port: Int = 5432,
            durable: Bool = true,
            maxConnections: Int = 100,
            superuser: String = "postgres",
            slowStatementThreshold: Duration? = nil
        ) {
            self.port = port
            self.durable = durable
            self.maxConnections = maxConnections
            self.superuser = superuser
            self.slowStatementThreshold = slowStatementThreshold
        }
    }
}
