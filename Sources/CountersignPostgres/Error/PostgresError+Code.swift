extension PostgresError {
    /// A stable, machine-readable error code.
    ///
    /// A struct over a string rather than an enum, so that codes can be added without
    /// breaking callers that switch over them.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The code as it appears in logs and metrics, e.g. `"pool_timeout"`.
        public let rawValue: String

        private init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// No connection could be opened (server down, refused, authentication failed,
        /// connect timeout). Nothing was sent; the call may be retried.
        public static let connectionFailed = Self("connection_failed")
        /// The connection broke while a call was running on it (backend terminated, server
        /// restarted, network cut). The statement may or may not have taken effect, so it is
        /// not retried automatically. The connection is replaced before its next use.
        public static let connectionLost = Self("connection_lost")
        /// The server refused the statement; see ``PostgresError/sqlState``.
        public static let queryFailed = Self("query_failed")
        /// No connection became free within the pool's `acquireTimeout`.
        public static let poolTimeout = Self("pool_timeout")
        /// The pool is shutting down or shut down.
        public static let poolClosed = Self("pool_closed")
        /// A column could not be decoded as the asked type (or was NULL for a non-optional).
        public static let decodingFailed = Self("decoding_failed")
        /// A parameter cannot be sent, e.g. text containing a NUL character.
        public static let invalidParameter = Self("invalid_parameter")
        /// The statement returned something this client does not handle (e.g. `COPY`).
        public static let unsupportedStatement = Self("unsupported_statement")
        /// `withTransaction` could not commit because the transaction had already failed
        /// (a statement error was caught inside the closure); everything was rolled back.
        public static let transactionRolledBack = Self("transaction_rolled_back")
        /// A ``PostgresConnection`` was used after its closure returned.
        public static let connectionUnavailable = Self("connection_unavailable")
        /// A connection string could not be parsed.
        public static let invalidConnectionString = Self("invalid_connection_string")
    }
}
