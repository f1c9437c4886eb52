import CountersignPostgres

/// The service cannot start with what it was given (a file, a key, an address): printed as
/// `Error: <message>` alone, exit status 1. A flag or environment value that does not parse is
/// a `ValidationError` instead (usage printed, exit status 64).
struct StartupError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension StartupError {
    /// A database that cannot be reached, said with where it was looked for (its password
    /// masked), rather than as a bare `PostgresError`.
    static func unreachable(_ database: PostgresConfiguration, _ error: PostgresError) -> StartupError {
        StartupError("cannot connect to the database (\(database.redactedConnectionString)): \(String(reflecting: error))")
    }
}
