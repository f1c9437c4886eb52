import CountersignCore
import Foundation
public import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A PostgreSQL cluster in a directory of its own, for development (`countersign dev`) and
/// tests: created with `initdb` on first start, reachable only through a Unix socket
/// (`listen_addresses = ''`, so no TCP port is taken), trusting local connections.
///
/// Layout: `<directory>/data` (the cluster), `<directory>/socket` (the socket),
/// `<directory>/postgresql.log` (the server log). A cluster stopped and started again
/// keeps its data.
///
/// `initdb` and `pg_ctl` refuse to run as root; as root they run as the `postgres` OS user
/// (`runuser -u postgres --`), which then owns the directory.
///
/// Every method blocks while the PostgreSQL programs run (seconds for the first start):
/// call them from a thread of your own, not from async code that must stay responsive.
public final class LocalPostgresCluster: Sendable {
    /// The cluster's directory (absolute).
    public let directory: String
    /// `<directory>/data`.
    public let dataDirectory: String
    /// Where the server's socket lives: `<directory>/socket`, or a short directory under
    /// `/tmp` when that path would be too long for a Unix socket (see ``init(directory:options:logger:)``).
    public let socketDirectory: String
    /// The server log.
    public let logFile: String
    /// The options the cluster is created and started with.
    public let options: Options

    private let logger: Logger

    /// A Unix socket path holds at most 107 bytes (108 with the NUL) on Linux, 103 on macOS.
    static let maximumSocketPathLength = 103

    /// Describes a cluster in `directory`; nothing is created until ``start()``.
    ///
    /// If `<directory>/socket/.s.PGSQL.<port>` would be longer than a Unix socket path may
    /// be, the socket goes to `/tmp/countersign-pg-<hash of directory>` instead (the same
    /// one for the same directory, so restarts find it), and this is logged.
    public init(
        directory: String,
        options: Options = Options(),
        logger: Logger = Logger(label: "countersign.postgres.local")
    ) {
        let absolute = URL(fileURLWithPath: directory).standardizedFileURL.path
        self.directory = absolute
        self.dataDirectory = absolute + "/data"
        self.logFile = absolute + "/postgresql.log"
        self.options = options
        self.logger = logger

        let preferred = absolute + "/socket"
        if (preferred + "/.s.PGSQL.\(options.port)").utf8.count <= Self.maximumSocketPathLength {
            self.socketDirectory = preferred
        } else {
            self.socketDirectory = "/tmp/countersign-pg-" + Self.shortHash(absolute)
            logger.notice(
                "the cluster directory is too long for a Unix socket path; using a short socket directory instead",
                metadata: ["cluster.directory": "\(absolute)", "cluster.socket_directory": "\(socketDirectory)"]
            )
        }
    }

    /// Whether a server is running on this cluster's data directory.
    public var isRunning: Bool {
        guard FileManager.default.fileExists(atPath: dataDirectory + "/PG_VERSION"),
            let binaries = try? PostgresBinaries.locate(),
            let output = try? runServerProgram(binaries.path("pg_ctl"), ["status", "-D", dataDirectory])
        else { return false }
        return output.status == 0
    }

    /// Creates the cluster if needed, starts it if it is not running, and returns the
    /// connection string of its `postgres` database.
    @discardableResult
    public func start() throws -> String {
        let binaries = try locateBinaries()
        try prepareDirectories()

        if !FileManager.default.fileExists(atPath: dataDirectory + "/PG_VERSION") {
            try initialize(binaries)
        }
        try writeSettings()

        if isRunning {
            logger.debug("reusing the running local PostgreSQL cluster", metadata: ["cluster.directory": "\(directory)"])
            return connectionString()
        }
        let output = try runServerProgram(
            binaries.path("pg_ctl"),
            ["start", "-D", dataDirectory, "-l", logFile, "-w", "-t", "60", "-s"]
        )
        guard output.status == 0 else {
            // Someone else may have started it meanwhile; that is as good.
            if isRunning { return connectionString() }
            throw failure("pg_ctl start failed", output: output.text + "\n" + logTail())
        }
        logger.info(
            "started a local PostgreSQL cluster",
            metadata: ["cluster.directory": "\(directory)", "cluster.socket_directory": "\(socketDirectory)"]
        )
        return connectionString()
    }

    /// Stops the server (`pg_ctl stop -m fast`: sessions are disconnected, transactions
    /// rolled back). Does nothing if it is not running.
    public func stop() throws {
        guard FileManager.default.fileExists(atPath: dataDirectory + "/postmaster.pid") else { return }
        let binaries = try locateBinaries()
        let output = try runServerProgram(
            binaries.path("pg_ctl"),
            ["stop", "-D", dataDirectory, "-m", "fast", "-w", "-t", "60", "-s"]
        )
        guard output.status == 0 || !isRunning else {
            throw failure("pg_ctl stop failed", output: output.text)
        }
        logger.debug("stopped the local PostgreSQL cluster", metadata: ["cluster.directory": "\(directory)"])
    }

    /// The connection string of `database` on this cluster (over its Unix socket).
    public func connectionString(database: String = "postgres") -> String {
        PostgresConfiguration.connectionString([
            "host": socketDirectory,
            "port": String(options.port),
            "user": options.superuser,
            "dbname": database,
        ])
    }

    /// Creates a database on the running cluster and returns its connection string.
    public func createDatabase(name: String) throws -> String {
        guard !name.isEmpty, name.utf8.count <= 63, !name.utf8.contains(0), !name.hasPrefix("-") else {
            throw CountersignError(.localClusterFailed, "\"\(name)\" is not a usable database name (1 to 63 bytes)")
        }
        let binaries = try locateBinaries()
        let output = try run(
            binaries.path("createdb"),
            ["-h", socketDirectory, "-p", String(options.port), "-U", options.superuser, name]
        )
        guard output.status == 0 else {
            throw failure("createdb \(name) failed", output: output.text)
        }
        return connectionString(database: name)
    }

    // MARK: - Steps

    private func locateBinaries() throws -> PostgresBinaries {
        do {
            return try PostgresBinaries.locate()
        } catch {
            throw CountersignError(.localClusterFailed, "\(error)")
        }
    }

    private func prepareDirectories() throws {
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try manager.createDirectory(
                atPath: socketDirectory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw CountersignError(.localClusterFailed, "cannot create \(directory): \(error)")
        }
        let owner = try serverOwner()
        if !socketDirectory.hasPrefix(directory + "/") {
            try checkSharedSocketDirectoryIsOurs(owner: owner?.uid)
        }
        if let owner {
            for path in [directory, socketDirectory] where chown(path, owner.uid, owner.gid) != 0 {
                throw CountersignError(.localClusterFailed, "cannot hand \(path) to the postgres user (errno \(errno))")
            }
            try checkServerUserReaches(directory)
        }
    }

    /// The short socket directory lives in `/tmp`, where any local user could have made it first
    /// (its name follows from the cluster's path) and listen there in the server's place, or
    /// read what clients send. So it is used only if it is a real directory of ours (or of the
    /// postgres user's, from an earlier start as root) that nobody else may enter.
    private func checkSharedSocketDirectoryIsOurs(owner serverUID: uid_t?) throws {
        var status = stat()
        guard lstat(socketDirectory, &status) == 0 else {
            throw CountersignError(.localClusterFailed, "cannot inspect \(socketDirectory) (errno \(errno))")
        }
        let isDirectory = (status.st_mode & S_IFMT) == S_IFDIR
        let owners = [geteuid()] + (serverUID.map { [$0] } ?? [])
        guard isDirectory, owners.contains(status.st_uid), status.st_mode & 0o077 == 0 else {
            throw CountersignError(
                .localClusterFailed,
                "\(socketDirectory), the socket directory of a cluster whose path is too long for a socket, "
                    + "is not a private directory of this user (another user may have made it): remove it, or use a shorter data directory"
            )
        }
    }

    /// Owning the directory is not enough: the postgres user must also pass through every
    /// directory above it. A checkout under `/root` (mode 0700) would otherwise fail in
    /// `initdb` with a bare "could not access directory ...: Permission denied".
    private func checkServerUserReaches(_ path: String) throws {
        var ancestors: [String] = []
        var current = URL(fileURLWithPath: path)
        while current.path != "/" {
            current.deleteLastPathComponent()
            ancestors.insert(current.path, at: 0)
        }
        // Prints the first (outermost) directory the server user cannot pass through.
        let script = "for d do test -x \"$d\" || { printf '%s' \"$d\"; exit 1; }; done"
        let output = try runServerProgram("/bin/sh", ["-c", script, "sh"] + ancestors + [path])
        guard output.status != 0 else { return }
        let blocked = output.text.isEmpty ? path : output.text
        throw CountersignError(
            .localClusterFailed,
            "the postgres user, which runs PostgreSQL when Countersign runs as root, cannot reach \(path): "
                + "it may not pass through \(blocked); allow it (chmod o+x \(blocked)) or put the data directory elsewhere"
        )
    }

    private func initialize(_ binaries: PostgresBinaries) throws {
        logger.info("creating a local PostgreSQL cluster", metadata: ["cluster.directory": "\(directory)"])
        var arguments = [
            "-D", dataDirectory, "-U", options.superuser, "--auth=trust", "--encoding=UTF8", "--no-locale",
        ]
        if !options.durable { arguments.append("--no-sync") }
        let output = try runServerProgram(binaries.path("initdb"), arguments)
        guard output.status == 0 else {
            throw failure("initdb failed", output: output.text)
        }
        // Our settings live in a file of their own, rewritten on every start.
        let configuration = dataDirectory + "/postgresql.conf"
        let include = "\ninclude_if_exists = 'countersign.conf'\n"
        guard let handle = FileHandle(forWritingAtPath: configuration) else {
            throw CountersignError(.localClusterFailed, "cannot open \(configuration)")
        }
        defer { try? handle.close() }
        do {
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(include.utf8))
        } catch {
            throw CountersignError(.localClusterFailed, "cannot extend \(configuration): \(error)")
        }
    }

    private func writeSettings() throws {
        let durability = options.durable ? "on" : "off"
        var settings = """
            # Written by Countersign's LocalPostgresCluster on every start; edits are overwritten.
            listen_addresses = ''
            port = \(options.port)
            unix_socket_directories = \(Self.quoteSetting(socketDirectory))
            unix_socket_permissions = 0777
            max_connections = \(options.maxConnections)
            fsync = \(durability)
            synchronous_commit = \(durability)
            full_page_writes = \(durability)

            """
        if let threshold = options.slowStatementThreshold {
            settings += """
                log_min_duration_statement = \(PostgresConfiguration.wholeMilliseconds(threshold))
                log_lock_waits = on
                log_parameter_max_length = 0
                log_line_prefix = '%m [%p] %a@%d '

                """
        }
        let path = dataDirectory + "/countersign.conf"
        guard FileManager.default.createFile(atPath: path, contents: Data(settings.utf8)) else {
            throw CountersignError(.localClusterFailed, "cannot write \(path)")
        }
        if let owner = try serverOwner(), chown(path, owner.uid, owner.gid) != 0 {
            throw CountersignError(.localClusterFailed, "cannot hand \(path) to the postgres user (errno \(errno))")
        }
    }

    // MARK: - Running programs

    /// The postgres OS user, when the server programs must run as it (we are root).
    private func serverOwner() throws -> (uid: uid_t, gid: gid_t)? {
        guard geteuid() == 0 else { return nil }
        guard let entry = getpwnam("postgres") else {
            throw CountersignError(
                .localClusterFailed,
                "running as root, but there is no 'postgres' OS user to run the server as (initdb refuses root)"
            )
        }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// Runs a server program, as the postgres user if we are root.
    private func runServerProgram(_ program: String, _ arguments: [String]) throws -> ProcessRunner.Output {
        guard try serverOwner() != nil else {
            return try run(program, arguments)
        }
        guard let runuser = ProcessRunner.find("runuser", in: ["/usr/sbin", "/sbin"]) else {
            throw CountersignError(
                .localClusterFailed,
                "running as root needs runuser (util-linux) to start PostgreSQL as the postgres user"
            )
        }
        return try run(runuser, ["-u", "postgres", "--", program] + arguments)
    }

    private func run(_ program: String, _ arguments: [String]) throws -> ProcessRunner.Output {
        do {
            // The server user may not be allowed into the caller's working directory.
            return try ProcessRunner.run(program, arguments, currentDirectory: directory)
        } catch {
            throw CountersignError(.localClusterFailed, "\(error)")
        }
    }

    private func failure(_ what: String, output: String) -> CountersignError {
        let trimmed = output.trimmingCharacters(in: .whitespacesAndNewlines)
        return CountersignError(.localClusterFailed, trimmed.isEmpty ? what : "\(what): \(trimmed)")
    }

    private func logTail(lines: Int = 20) -> String {
        guard let data = FileManager.default.contents(atPath: logFile) else { return "" }
        let text = String(decoding: data, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    private static func quoteSetting(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// FNV-1a, 64 bits, as 16 hex digits: stable across runs (unlike `hashValue`).
    private static func shortHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
