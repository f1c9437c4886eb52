import ArgumentParser
import CountersignCore
import CountersignCrypto
import CountersignPostgres
import CountersignStorage
import Logging

struct RekeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        abstract: "Rotate the master key: seal every tenant's data key under a new one.",
        discussion: """
            Opens each tenant's data key with the current master key and seals it under the new \
            one, in one transaction; the secrets stay as they are, sealed under their data keys. \
            Then restart every instance with the new key file. Until it restarts, an instance \
            still given the old key serves the tenants whose data keys it has open already, and \
            answers 503 master_key_unavailable where it would need another. Run again with the \
            same keys, it changes nothing, or seals anew a data key that an instance of an earlier \
            release created meanwhile. Keep the old key while an instance or a backup needs it.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: "File holding the current master key. Env: COUNTERSIGN_MASTER_KEY_FILE.")
    var masterKeyFile: String?

    @Option(help: "File holding the new master key: 32 bytes, raw, base64 or hex, e.g. from `(umask 077; openssl rand -base64 32 > new.key)`.")
    var newMasterKeyFile: String

    private var currentMasterKeyFile: String? { masterKeyFile ?? Environment.string("COUNTERSIGN_MASTER_KEY_FILE") }

    // Checked here, not in run(), so that the usage printed with the error is rekey's own.
    func validate() throws {
        guard currentMasterKeyFile != nil else {
            throw ValidationError("give the current master key with --master-key-file or COUNTERSIGN_MASTER_KEY_FILE")
        }
    }

    func run() async throws {
        let logger = logging.bootstrap()
        guard let currentFile = currentMasterKeyFile else { preconditionFailure("validate() requires a master key file") }
        let current = try Self.key(in: currentFile)
        let new = try Self.key(in: newMasterKeyFile)
        guard current != new else { throw StartupError("the new master key is the current one") }
        let runner = MigrationRunner(migrations: try database.migrations())
        let configuration = database.postgresConfiguration()
        let pool = PostgresPool(configuration: configuration, logger: logger)
        let resealed: Int?
        do {
            if let missing = try await runner.pendingMigrations(on: pool).first {
                throw StartupError("the database lacks migration \(missing.version) (\(missing.name)) and later: run `countersign migrate` first")
            }
            resealed = try await SecretVault(masterKey: current, pool: pool).rotateMasterKey(to: new)
        } catch {
            await pool.close()
            switch error {
            case let error as CountersignError:
                throw StartupError(error.message)
            case let error as PostgresError where error.code == .connectionFailed:
                throw StartupError.unreachable(configuration, error)
            default:
                throw error
            }
        }
        await pool.close()
        if let resealed {
            print("sealed \(resealed) tenant data key(s) under the new master key: restart every instance with it now")
        } else {
            print("every data key is sealed under the new master key already; nothing changed")
        }
    }

    private static func key(in file: String) throws -> SymmetricKey {
        do {
            return try MasterKey.load(fromFile: file)
        } catch {
            throw StartupError("cannot use the master key file \(file): \(error)")
        }
    }
}
