import ArgumentParser
import CountersignCore
import CountersignCrypto
import CountersignHTTP
import CountersignPostgres
import CountersignStorage
import Foundation
import Hummingbird
import Logging
import NIOPosix

struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Run Countersign locally with a PostgreSQL it manages itself and a demo tenant.",
        discussion: """
            Without COUNTERSIGN_DATABASE_URL (or --database-url), creates a PostgreSQL cluster under \
            the data directory (initdb + pg_ctl on a unix socket), starts it, and stops it on exit; \
            the next run reuses it. Generates a master key and an operator key there, applies the \
            migrations, creates the tenant 'demo' with an admin and a client key (kept in \
            demo-keys.json there, never printed whole), prints a ready-to-paste curl example that \
            reads them, and serves on 127.0.0.1:8080.

            Besides the variables of `countersign serve` (flags win), dev reads:
              COUNTERSIGN_DEV_DIR            the data directory (.countersign)
              COUNTERSIGN_PG_BINDIR          where initdb and pg_ctl are, when neither
                                             pg_config nor /usr/lib/postgresql/*/bin
                                             finds them
            """
    )

    @Option(help: "Where the local cluster, keys and demo credentials live. Env: COUNTERSIGN_DEV_DIR.")
    var dataDir: String = Environment.string("COUNTERSIGN_DEV_DIR") ?? ".countersign"

    @Flag(help: "Run the local cluster without fsync. For benchmarks that measure the service rather than the disk: a crash of the machine loses data.")
    var noFsync = false

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var recording: RecordingOptions
    @OptionGroup var http: HTTPOptions
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        // The option groups checked themselves as they were read, the pool size among them.
        try recording.validate(poolSize: database.poolSize)
    }

    func run() async throws {
        let logger = logging.bootstrap()
        let directory = URL(fileURLWithPath: dataDir).standardizedFileURL
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A second `dev` on the same directory would take the first one's cluster down with it
        // when it stops (or fails to bind its port): one at a time.
        let lock = try DevFiles.lock(directory.appendingPathComponent("dev.lock").path)
        defer { close(lock) }

        var cluster: LocalPostgresCluster?
        var fallbackURL = ""
        let interruption = StartupInterruption(logger: logger)
        if !database.isDatabaseConfigured {
            let local = LocalPostgresCluster(
                directory: directory.appendingPathComponent("postgres").path,
                options: .init(durable: !noFsync)
            )
            logger.notice("starting the local PostgreSQL cluster", metadata: ["directory": "\(local.directory)"])
            // Kept before it starts: a start that gives up while the server still comes up
            // (pg_ctl's wait ran out) must not leave it running behind dev.
            cluster = local
            // initdb and pg_ctl block: on a thread that may.
            fallbackURL = try await interruption.step { try await NIOThreadPool.singleton.runIfActive { try local.start() } }
        }
        defer {
            if let cluster, cluster.isRunning {
                logger.notice("stopping the local PostgreSQL cluster")
                do {
                    try cluster.stop()
                } catch {
                    logger.warning("the local PostgreSQL cluster did not stop", metadata: ["error": "\(error)"])
                }
            }
        }
        try interruption.check()

        let masterKeyFile = directory.appendingPathComponent("master.key").path
        if !FileManager.default.fileExists(atPath: masterKeyFile) {
            _ = try MasterKey.generate(toFile: masterKeyFile)
        }
        let operatorKeyFile = directory.appendingPathComponent("operator.key").path
        if !FileManager.default.fileExists(atPath: operatorKeyFile) {
            try DevFiles.writeSecret(try SecureRandom.token(byteCount: 32), to: operatorKeyFile)
        }
        var configuration = ServiceConfiguration(
            database: database.postgresConfiguration(fallback: fallbackURL),
            migrationsDirectory: try database.resolvedMigrationsDirectory()
        )
        try http.apply(to: &configuration)
        recording.apply(to: &configuration)
        if configuration.masterKey == nil {
            configuration.masterKey = try MasterKey.load(fromFile: masterKeyFile)
        }
        // The banner says where the operator key is: the one configured, else dev's own file.
        let operatorKeySource: String
        if let configuredFile = http.operatorKeyFile ?? Environment.string("COUNTERSIGN_OPERATOR_KEY_FILE") {
            operatorKeySource = "in \(configuredFile)"
        } else if Environment.string("COUNTERSIGN_OPERATOR_KEY") != nil {
            operatorKeySource = "in COUNTERSIGN_OPERATOR_KEY"
        } else {
            configuration.operatorKey = try OperatorKey(String(contentsOfFile: operatorKeyFile, encoding: .utf8))
            operatorKeySource = "in \(operatorKeyFile)"
        }

        try ListenAddress.checkAvailable(host: configuration.host, port: configuration.port)
        let keysFile = directory.appendingPathComponent("demo-keys.json").path
        let demo = try await interruption.step {
            try await DemoTenant.prepare(
                configuration: configuration,
                masterKeyFile: http.masterKeyFile ?? Environment.string("COUNTERSIGN_MASTER_KEY_FILE") ?? masterKeyFile,
                keysFile: keysFile,
                logger: logger
            )
        }
        try interruption.check()
        // Standard output is a pipe under supervisors: flush so the banner shows before the logs.
        FileHandle.standardOutput.write(Data(demo.banner(host: configuration.host, port: configuration.port, operatorKey: operatorKeySource, keysFile: keysFile).utf8))

        let app = try buildApplication(configuration, logger: logger)
        try interruption.end()
        try await app.runService()
    }
}

/// Files under the dev directory that hold secrets: readable by this user only.
enum DevFiles {
    /// Created with mode 0600 (Foundation's `createFile` writes with the umask's mode, then
    /// changes it, leaving the secret readable meanwhile).
    static func writeSecret(_ text: String, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StartupError("cannot write \(path) (errno \(errno))") }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        guard fchmod(descriptor, 0o600) == 0, bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
            throw StartupError("cannot write \(path) (errno \(errno))")
        }
    }

    /// Takes the lock file at `path` for as long as the returned descriptor is open.
    static func lock(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StartupError("cannot open \(path) (errno \(errno))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw StartupError("the data directory is in use by another `countersign dev` (\(path) is locked); stop it, or give another --data-dir")
        }
        return descriptor
    }
}
