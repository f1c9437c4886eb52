extension PostgresConfiguration {
    /// `connectionString` (key/value or URI) with its database replaced by `database`,
    /// returned as a key/value string. Every other option, the password included, is kept.
    ///
    /// Throws ``PostgresError/Code/invalidConnectionString`` if libpq cannot parse it.
    public static func connectionString(
        _ connectionString: String,
        replacingDatabaseWith database: String
    ) throws -> String {
        var options = try LibPQConnectionString.options(of: connectionString).filter { $0.keyword != "dbname" }
        options.append(("dbname", database))
        return LibPQConnectionString.keyValueString(options)
    }

    /// A key/value connection string from options, each value quoted as libpq expects
    /// (`host='/tmp/pg sock' dbname='app'`).
    public static func connectionString(_ options: KeyValuePairs<String, String>) -> String {
        LibPQConnectionString.keyValueString(options.map { (keyword: $0.key, value: $0.value) })
    }
}
