import CountersignCore
import CountersignHTTP
import CountersignPostgres
import CountersignStorage
import Foundation
import Logging

/// The `demo` tenant of `countersign dev`, with one admin and one client key.
///
/// Keys are shown once by the service; dev keeps the demo ones in a file of the dev directory
/// so that a restart prints the same keys instead of piling up new ones.
struct DemoTenant: Codable {
    var tenantID: UUID
    var adminKey: String
    var clientKey: String

    static func prepare(configuration: ServiceConfiguration, masterKeyFile: String, keysFile: String, logger: Logger) async throws -> DemoTenant {
        let pool = PostgresPool(configuration: configuration.database, logger: logger)
        do {
            let demo = try await prepare(on: pool, configuration: configuration, masterKeyFile: masterKeyFile, keysFile: keysFile, logger: logger)
            await pool.close()
            return demo
        } catch {
            await pool.close()
            throw error
        }
    }

    private static func prepare(
        on pool: PostgresPool,
        configuration: ServiceConfiguration,
        masterKeyFile: String,
        keysFile: String,
        logger: Logger
    ) async throws -> DemoTenant {
        let runner = MigrationRunner(migrations: try SchemaVersion.migrations(in: configuration.migrationsDirectory))
        _ = try await runner.migrate(on: pool, logger: logger)
        // Before the demo credential is sealed under it, and before the banner promises a service.
        if try await SecretVault(masterKey: configuration.masterKey, pool: pool).masterKeyMatchesDatabase() == false {
            throw StartupError(
                "the master key in \(masterKeyFile) is not this database's: it does not open what the database holds sealed under its master key (after `countersign rekey`, put the new key in \(masterKeyFile))"
            )
        }

        let keys = APIKeyStore(pool: pool)
        if let data = FileManager.default.contents(atPath: keysFile),
            let saved = try? JSONDecoder().decode(DemoTenant.self, from: data),
            try await saved.keysStillWork(keys)
        {
            try await saved.provisionPolicy(pool: pool, configuration: configuration)
            return saved
        }
        let tenants = TenantStore(pool: pool)
        let tenant: Tenant
        if let existing = try await tenants.get(name: "demo") {
            tenant = existing
        } else {
            tenant = try await tenants.create(name: "demo")
        }
        guard let admin = try await keys.create(tenantID: tenant.id, name: "demo admin", role: .admin, createdBy: .operator),
            let client = try await keys.create(tenantID: tenant.id, name: "demo client", role: .client, createdBy: .operator)
        else { throw CountersignError(.internalError, "the demo tenant vanished while creating its keys") }
        let demo = DemoTenant(tenantID: tenant.id, adminKey: admin.token.text, clientKey: client.token.text)
        try DevFiles.writeSecret(String(decoding: try JSONEncoder().encode(demo), as: UTF8.self), to: keysFile)
        try await demo.provisionPolicy(pool: pool, configuration: configuration)
        return demo
    }

    static let demoHost = "intranet.example.com"

    /// A first credential and rule, so that the banner's example gets a real answer. Only
    /// for a tenant whose policy was never saved: an edited demo policy is left alone.
    private func provisionPolicy(pool: PostgresPool, configuration: ServiceConfiguration) async throws {
        let policies = PolicyStore(pool: pool)
        guard try await policies.get(tenantID: tenantID).version == 0 else { return }
        let credentials = CredentialStore(pool: pool, vault: SecretVault(masterKey: configuration.masterKey, pool: pool))
        let saved = try await credentials.save(
            tenantID: tenantID,
            .init(
                attributes: CredentialAttributes(host: Self.demoHost, realm: "Intranet", account: "demo"),
                domain: nil,
                label: "demo credential",
                password: "correct horse battery staple",
                owner: .tenant(submittedBy: nil)
            ),
            actor: "dev"
        )
        let rule = PolicyRule(
            id: "intranet",
            name: "Intranet Basic and Digest",
            // As narrow as the credential: a rule newcomers copy must not hand a password to
            // every host of a domain, or over plain http.
            match: RuleMatch(host: try HostPattern(Self.demoHost), protocolName: "https", realm: "Intranet", methods: [.httpBasic, .httpDigest]),
            then: RuleAction(disposition: .useCredential, credentialId: saved.credential.id.text, persistence: .forSession, maxFailures: 3)
        )
        _ = try await policies.replace(tenantID: tenantID, expectedVersion: 0, with: Policy(rules: [rule]), actor: "dev")
    }

    private func keysStillWork(_ keys: APIKeyStore) async throws -> Bool {
        for text in [adminKey, clientKey] {
            guard let token = APIKeyToken(parsing: text), let found = try await keys.lookup(token),
                !found.key.isRevoked, !found.tenantDisabled, found.key.tenantID == tenantID
            else { return false }
        }
        return true
    }

    /// `operatorKey` says where the operator key is (`in <file>`); `keysFile` holds the demo keys.
    /// The banner names them by their prefix only: standard output is a log under supervisors and
    /// in CI, and a whole key there is a key leaked. The commands it prints read them from the file.
    func banner(host: String, port: Int, operatorKey: String, keysFile: String) -> String {
        let base = "http://" + ListenAddress.display(host: host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host, port: port)
        func prefix(_ key: String) -> String { (APIKeyToken(parsing: key)?.prefix ?? "csk") + "_…" }
        return """

            Countersign dev is starting on \(base)
              tenant        demo (\(tenantID.text))
              admin key     \(prefix(adminKey))   (whole, in \(keysFile))
              client key    \(prefix(clientKey))   (whole, in \(keysFile))
              operator key  \(operatorKey)

            Try it: take the keys, open a session as a client, then forward the Basic challenge a server sent:
              ADMIN_KEY=$(grep -o '"adminKey":"[^"]*"' "\(keysFile)" | cut -d '"' -f 4)
              CLIENT_KEY=$(grep -o '"clientKey":"[^"]*"' "\(keysFile)" | cut -d '"' -f 4)
              SESSION=$(curl -s -H "Authorization: Bearer $CLIENT_KEY" -H 'Content-Type: application/json' \\
                -d '{"clientId":"laptop-1"}' \(base)/v1/sessions | grep -o '"id":"[^"]*"' | head -n 1 | cut -d '"' -f 4)
              curl -s -H "Authorization: Bearer $CLIENT_KEY" -H 'Content-Type: application/json' \\
                -d '{"taskId":"t1","protectionSpace":{"host":"\(Self.demoHost)","port":443,"protocol":"https","realm":"Intranet","authenticationMethod":"NSURLAuthenticationMethodHTTPBasic"}}' \\
                \(base)/v1/sessions/$SESSION/challenges

            As the admin, see the policy and the decisions:
              curl -s -H "Authorization: Bearer $ADMIN_KEY" \(base)/v1/policy
              curl -s -H "Authorization: Bearer $ADMIN_KEY" \(base)/v1/decisions

            """
    }
}
