import Foundation

/// An error from the database layer: the pool, a connection, a statement or decoding a row.
///
/// `description` is deliberately generic: it carries the ``code`` and the SQLSTATE and
/// nothing else, because the SQL, its parameters and the server's message (which may
/// echo a value, e.g. a duplicate key) must not end up in logs or responses by accident.
/// `String(reflecting: error)` (``debugDescription``) adds the server's primary message
/// and the client-side reason, for debugging.
///
/// Compare errors by ``code``; use the helpers (``isUniqueViolation``, ...) for SQLSTATEs.
public struct PostgresError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What kind of failure this is. Stable; see ``Code``.
    public var code: Code
    /// The five-character SQLSTATE the server reported (e.g. `"23505"`), if the server reported one.
    public var sqlState: String?
    /// The name of the constraint that was violated (`PG_DIAG_CONSTRAINT_NAME`), if any.
    public var constraintName: String?
    /// The column the error is about, if any: for ``Code/decodingFailed`` the result column,
    /// for a constraint violation the table column the server named. A name, never a value.
    public var column: String?

    /// The server's primary message. May contain values: only in `debugDescription`.
    var serverMessage: String?
    /// A client-side explanation that never contains values. Only in `debugDescription`.
    var reason: String?

    /// Creates an error with a code and, optionally, the SQLSTATE and constraint it is about.
    public init(_ code: Code, sqlState: String? = nil, constraintName: String? = nil) {
        self.code = code
        self.sqlState = sqlState
        self.constraintName = constraintName
    }

    init(
        _ code: Code,
        reason: String?,
        sqlState: String? = nil,
        constraintName: String? = nil,
        column: String? = nil,
        serverMessage: String? = nil
    ) {
        self.code = code
        self.sqlState = sqlState
        self.constraintName = constraintName
        self.column = column
        self.serverMessage = serverMessage
        self.reason = reason
    }

    public var description: String {
        if let sqlState {
            return "PostgresError(code: \(code), sqlState: \(sqlState))"
        }
        return "PostgresError(code: \(code))"
    }

    public var debugDescription: String {
        var parts = ["code: \(code)"]
        if let sqlState { parts.append("sqlState: \(sqlState)") }
        if let reason { parts.append("reason: \(reason)") }
        if let column { parts.append("column: \(column)") }
        if let constraintName { parts.append("constraint: \(constraintName)") }
        if let serverMessage { parts.append("serverMessage: \(serverMessage)") }
        // libpq's messages span lines ("...refused\n\tIs the server running..."): one log
        // record stays one line.
        let text = parts.joined(separator: ", ").split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        return "PostgresError(\(text.joined(separator: " ")))"
    }
}

extension PostgresError {
    /// SQLSTATE 23505: a unique constraint or unique index refused the row.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// SQLSTATE 23503: a foreign key refused the row.
    public var isForeignKeyViolation: Bool { sqlState == "23503" }
    /// SQLSTATE 23502: a NOT NULL column got NULL.
    public var isNotNullViolation: Bool { sqlState == "23502" }
    /// SQLSTATE 23514: a CHECK constraint refused the row.
    public var isCheckViolation: Bool { sqlState == "23514" }
    /// SQLSTATE 40001: a serializable transaction must be retried.
    public var isSerializationFailure: Bool { sqlState == "40001" }
    /// SQLSTATE 40P01: the transaction was chosen as a deadlock victim and may be retried.
    public var isDeadlockDetected: Bool { sqlState == "40P01" }
    /// A lock wait that ran past `lock_timeout`.
    public var isLockNotAvailable: Bool { sqlState == "55P03" }
    /// SQLSTATE 57014: the statement was cancelled, typically by `statement_timeout`.
    public var isQueryCanceled: Bool { sqlState == "57014" }
    /// The database answers but cannot take the request now, so that nothing was written:
    /// read-only (a standby during a failover, 25006), insufficient resources (class 53: disk
    /// full, out of memory, too many connections), shutting down or starting up (57P01 to 57P03),
    /// or failing outside PostgreSQL (class 58: I/O).
    public var isWriteUnavailable: Bool {
        guard let state = sqlState else { return false }
        return state == "25006" || state.hasPrefix("53") || state.hasPrefix("58") || ["57P01", "57P02", "57P03"].contains(state)
    }
}
