/// A database connection lent to one closure by ``PostgresPool/withConnection(_:)`` or
/// ``PostgresPool/withTransaction(_:)``.
///
/// Every method blocks: the closure runs on the pool's own thread for this connection,
/// never on an event loop or Swift's cooperative pool. The connection is valid only inside
/// the closure; afterwards every call throws ``PostgresError/Code/connectionUnavailable``.
/// It is not `Sendable` and must not leave the closure.
public final class PostgresConnection {
    private let base: LibPQConnection
    private var isValid = true

    init(_ base: LibPQConnection) {
        self.base = base
    }

    func invalidate() {
        isValid = false
    }

    /// Runs one statement and returns its rows.
    ///
    /// Parameters are sent apart from the SQL (`$1`, `$2`, ...), never spliced into it.
    /// A statement with parameters is prepared once per connection and reused (keyed by its
    /// SQL text and parameter types; at most 256 per connection, least recently used evicted).
    /// Exactly one statement is allowed; use ``simpleQuery(_:)`` for scripts.
    public func query(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        try requireValid()
        var encoded: [EncodedParameter] = []
        encoded.reserveCapacity(parameters.count)
        for (index, parameter) in parameters.enumerated() {
            encoded.append(try parameter.encoded(position: index + 1))
        }
        let raw = try base.run(sql, encoded)
        return PostgresResult(columns: raw.columns, values: raw.rows, affectedRows: raw.affectedRows)
    }

    /// Runs one statement and returns how many rows it inserted, updated or deleted.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws -> Int {
        try query(sql, parameters).affectedRows
    }

    /// Runs SQL text as it is, through the simple query protocol: several statements
    /// separated by `;`, no parameters, results discarded. For migration files and other
    /// trusted scripts only; never build its text from input. The server times each statement of
    /// the script, but the client's ``PostgresConfiguration/responseTimeout`` bounds the whole:
    /// lift it (``liftStatementTimeout()``) for a long script.
    public func simpleQuery(_ sql: String) throws {
        try requireValid()
        try base.execSimple(sql)
    }

    /// Lets the rest of this transaction run as long as it needs, for work that rightly takes
    /// longer than the service's statements (a migration, waiting for another instance's
    /// migration): `SET LOCAL statement_timeout = 0` for the server, and no
    /// ``PostgresConfiguration/responseTimeout`` for this client until the closure returns.
    /// Call it inside ``PostgresPool/withTransaction(_:)``; outside a transaction block the
    /// server ignores `SET LOCAL`.
    public func liftStatementTimeout() throws {
        try requireValid()
        _ = try base.execSimple("SET LOCAL statement_timeout = 0")
        base.liftResponseTimeout()
    }

    private func requireValid() throws(PostgresError) {
        guard isValid else {
            throw PostgresError(.connectionUnavailable, reason: "the connection was used after its closure returned")
        }
    }
}

@available(*, unavailable, message: "a PostgresConnection is valid only inside its closure")
extension PostgresConnection: Sendable {}
