/// How a ``PostgresPool`` reaches PostgreSQL and how it behaves.
public struct PostgresConfiguration: Sendable {
    /// A libpq connection string: key/value (`host=db1 dbname=countersign user=app`) or URI
    /// (`postgresql://app@db1/countersign?sslmode=verify-full`).
    ///
    /// Empty means libpq's own defaults and the `PG*` environment variables (`PGHOST`,
    /// `PGDATABASE`, `PGUSER`, `PGPASSFILE`, ...). Everything libpq understands works,
    /// including several hosts with `target_session_attrs=read-write` for failover.
    /// Default: `""`.
    public var connectionString: String

    /// The most connections the pool opens. Connections are opened lazily, on demand.
    /// Default: 6.
    public var poolSize: Int

    /// How long a caller waits for a free connection before failing with
    /// ``PostgresError/Code/poolTimeout``. Default: 5 seconds.
    public var acquireTimeout: Duration

    /// libpq's `connect_timeout`, used unless the connection string or `PGCONNECT_TIMEOUT`
    /// sets one. Whole seconds, rounded up; libpq treats 1 as 2. `.zero` waits forever.
    /// Default: 5 seconds.
    public var connectTimeout: Duration

    /// `statement_timeout`, set on every new connection. Milliseconds, rounded up;
    /// `.zero` disables it. A statement that runs longer fails with
    /// ``PostgresError/isQueryCanceled``. Default: 5 seconds.
    public var statementTimeout: Duration

    /// `application_name` shown in `pg_stat_activity`, used unless the connection string or
    /// `PGAPPNAME` sets one. Default: `"countersign"`.
    public var applicationName: String

    /// Creates a configuration; every argument has the documented default.
    public init(
        connectionString: String = "",
        poolSize: Int = 6,
        acquireTimeout: Duration = .seconds(5),
        connectTimeout: Duration = .seconds(5),
        statementTimeout: Duration = .seconds(5),
        applicationName: String = "countersign"
    ) {
        self.connectionString = connectionString
        self.poolSize = poolSize
        self.acquireTimeout = acquireTimeout
        self.connectTimeout = connectTimeout
        self.statementTimeout = statementTimeout
        self.applicationName = applicationName
    }
}

extension PostgresConfiguration {
    /// How long a statement waits for the server's answer before its connection is given up
    /// (``PostgresError/Code/connectionLost``): the statement timeout, which a working server
    /// enforces itself, plus the connect timeout as the allowance for the network. It bounds a
    /// server that hangs rather than fails. nil, waiting for ever, when either is `.zero`. The
    /// configured connect timeout counts here even where `PGCONNECT_TIMEOUT` or the connection
    /// string gives libpq another.
    public var responseTimeout: Duration? {
        statementTimeout > .zero && connectTimeout > .zero ? statementTimeout + connectTimeout : nil
    }

    /// The keyword/value pairs handed to `PQconnectdbParams` with `expand_dbname`.
    ///
    /// Order matters: libpq lets later entries override earlier ones, and the expanded
    /// connection string sits in the middle. Our defaults come before it, so the string
    /// wins; what we rely on (UTF-8) comes after it, so we win.
    func connectionParameters(environment: [String: String]) -> [(keyword: String, value: String)] {
        var parameters: [(keyword: String, value: String)] = []
        if environment["PGCONNECT_TIMEOUT"] == nil {
            parameters.append(("connect_timeout", String(Self.wholeSeconds(connectTimeout))))
        }
        // libpq's own fallback: used only if neither the string nor PGAPPNAME names one.
        parameters.append(("fallback_application_name", applicationName))
        parameters.append(("dbname", connectionString))
        parameters.append(("client_encoding", "UTF8"))
        return parameters
    }

    /// The statements run once on every new connection, before anyone uses it.
    ///
    /// DateStyle and TimeZone make timestamp output deterministic for decoding. JIT compilation is
    /// off: our statements are short, and a large tenant's state load, whose estimated cost
    /// crosses `jit_above_cost`, spent about 17 ms compiling for a few milliseconds of work.
    var sessionSetupSQL: String {
        [
            "SET statement_timeout = \(Self.wholeMilliseconds(statementTimeout))",
            "SET jit = off",
            "SET DateStyle = 'ISO, MDY'",
            "SET TimeZone = 'UTC'",
            "SET IntervalStyle = 'postgres'",
            "SET bytea_output = 'hex'",
            "SET extra_float_digits = 3",
        ].joined(separator: "; ")
    }

    static func wholeSeconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, duration > .zero else { return 0 }
        return seconds + (attoseconds > 0 ? 1 : 0)
    }

    static func wholeMilliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, duration > .zero else { return 0 }
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let (milliseconds, remainder) = attoseconds.quotientAndRemainder(dividingBy: attosecondsPerMillisecond)
        let (total, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return Int64(Int32.max) }
        // statement_timeout is an int4 of milliseconds.
        return min(total + milliseconds + (remainder > 0 ? 1 : 0), Int64(Int32.max))
    }
}
