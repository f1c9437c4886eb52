import CountersignCore
import CountersignCrypto
import CountersignPostgres
import CountersignStorage
import CountersignTestSupport
import Foundation
import Logging

/// A migrated fresh database with one tenant and the stores over it.
struct StorageFixture {
    let pool: PostgresPool
    let tenantID: UUID
    let vault: SecretVault
    let masterKey: SymmetricKey

    var credentials: CredentialStore { CredentialStore(pool: pool, vault: vault) }
    var sessions: SessionStore { SessionStore(pool: pool) }
    var decisions: DecisionStore { DecisionStore(pool: pool) }
    var state: DecisionStateStore { DecisionStateStore(pool: pool) }

    static var logger: Logger {
        var logger = Logger(label: "countersign.storage.tests")
        logger.logLevel = .critical
        return logger
    }

    static var migrationsDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("migrations").path
    }

    /// Runs `body` on a fresh, migrated database, and closes the pool afterwards.
    static func run(poolSize: Int = 6, _ body: (StorageFixture) async throws -> Void) async throws {
        let url = try await TestDatabase.freshDatabase()
        let pool = PostgresPool(configuration: TestDatabase.configuration(url, poolSize: poolSize), logger: logger)
        do {
            _ = try await MigrationRunner(migrations: try MigrationRunner.load(directory: migrationsDirectory)).migrate(on: pool, logger: logger)
            let tenant = try await TenantStore(pool: pool).create(name: "tenant-\(UUID().uuidString.prefix(8))")
            let masterKey = try SymmetricKey.random()
            try await body(StorageFixture(pool: pool, tenantID: tenant.id, vault: SecretVault(masterKey: masterKey, pool: pool), masterKey: masterKey))
        } catch {
            await pool.close()
            throw error
        }
        await pool.close()
    }

    /// A tenant credential for intranet.example.com.
    func credential(account: String = "svc", password: String = "s3cret") async throws -> Credential {
        try await credentials.save(
            tenantID: tenantID,
            .init(
                attributes: CredentialAttributes(host: "intranet.example.com", account: account), domain: nil, label: nil, password: password,
                owner: .tenant(submittedBy: nil)
            ),
            actor: "test"
        ).credential
    }

    static let space = ProtectionSpace(host: "intranet.example.com", port: 443, protocolName: "https", realm: "Intranet", authenticationMethod: .httpBasic)

    /// A decision releasing `credential` in `session`, made against the current state.
    func releaseRecord(
        _ credential: Credential,
        session: Session,
        maxFailures: Int,
        blockSeconds: Int = 300,
        space: ProtectionSpace = StorageFixture.space,
        remember: Bool = false
    ) async throws -> DecisionRecord {
        guard let tenant = try await state.tenantState(tenantID), let sessionState = try await state.sessionState(tenantID: tenantID, sessionID: session.id) else {
            throw CountersignError(.notFound, "no state")
        }
        let plan = DecisionPlan(
            disposition: .useCredential, credential: credential, persistence: remember ? .forSession : .none, scope: .task, source: .policy,
            reason: "test", maxFailures: maxFailures, blockSchedule: BlockSchedule(seconds: blockSeconds, incrementSeconds: 0, maximumSeconds: 86_400),
            rememberInSession: remember
        )
        return DecisionRecord(
            tenantID: tenantID, sessionID: session.id, clientID: session.clientId, keyID: UUID(), taskID: UUID().uuidString,
            space: space, previousFailureCount: 0, plan: plan, releasedUser: credential.attributes.account,
            tenantStateVersion: tenant.version, sessionStateVersion: sessionState.version
        )
    }

    func session(clientID: String = "device-1", ttlSeconds: Int = 3600) async throws -> Session {
        try await sessions.create(tenantID: tenantID, clientID: clientID, label: nil, ttlSeconds: ttlSeconds, keyID: UUID())
    }
}
