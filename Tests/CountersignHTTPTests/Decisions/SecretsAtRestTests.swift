import CountersignCore
import CountersignPostgres
import CountersignTestSupport
import Foundation
import Testing

/// A service and a direct line to its database, for looking under the API.
struct ServiceWithDatabase {
    static func run(_ body: @Sendable (TestAPI, PostgresPool) async throws -> Void) async throws {
        let url = try await TestDatabase.freshDatabase()
        let pool = PostgresPool(configuration: TestDatabase.configuration(url, poolSize: 2))
        do {
            try await TestService.run(configuration: try await TestService.configuration(databaseURL: url)) { api in
                try await body(api, pool)
            }
        } catch {
            await pool.close()
            throw error
        }
        await pool.close()
    }
}

@Suite("Secrets at rest")
struct SecretsAtRestTests {
    static let password = "plaintext-Kx7-never-stored"

    @Test func aServiceGivenAnotherMasterKeyDoesNotStart() async throws {
        let url = try await TestDatabase.freshDatabase()
        try await TestService.run(configuration: try await TestService.configuration(databaseURL: url)) { api in
            // Storing a credential creates the tenant's data key, sealed under that service's master key.
            _ = try await api.credential(try await api.tenant())
        }
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let instance = try ServiceProcess(databaseURL: url, keys: keys)
        defer { instance.stop() }
        await #expect(throws: ServiceProcessError.self) { try await instance.waitUntilReady() }
        #expect(!instance.isRunning)
        let log = try String(contentsOf: instance.logFile, encoding: .utf8)
        #expect(log.contains("the master key is not this database's"))
    }

    /// A key file left out of a deployment must not put into rotation an instance that can open
    /// none of the database's secrets.
    @Test func aServiceWithoutAMasterKeyDoesNotStartOnADatabaseHoldingSecrets() async throws {
        let url = try await TestDatabase.freshDatabase()
        try await TestService.run(configuration: try await TestService.configuration(databaseURL: url)) { api in
            _ = try await api.credential(try await api.tenant())
        }
        var keyless = try await TestService.configuration(databaseURL: url)
        keyless.masterKey = nil
        let refusal = await #expect(throws: CountersignError.self) {
            try await TestService.run(configuration: keyless) { _ in }
        }
        #expect(refusal?.message.contains("this instance has no master key, and the database has one") == true, "\(String(describing: refusal))")
    }

    @Test func theDatabaseNeverHoldsThePlaintext() async throws {
        try await ServiceWithDatabase.run { api, pool in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant, password: Self.password)
            try await api.releasePolicy(tenant)
            let session = try await api.session(tenant)
            #expect(try await api.decided(tenant, session: session).credentialPassword == Self.password)
            let typed = "typed-Qz4-never-stored"
            _ = try await api.submit(tenant, session: session, space: Space.basic.with { $0.host = "typed.example.com" }, user: "alice", password: typed, persistence: "forSession")

            let dumps = try await pool.withConnection { connection in
                var texts: [String] = []
                for table in ["credentials", "credential_history", "decisions", "session_memory", "sessions", "tenant_data_keys", "rejection_counters"] {
                    for row in try connection.query("SELECT row_to_json(t)::text AS row FROM \(table) t").rows {
                        texts.append(try row.decode("row"))
                    }
                }
                return texts
            }
            #expect(dumps.count > 5)
            for text in dumps {
                #expect(!text.contains(Self.password))
                #expect(!text.contains(typed))
            }
            let sealed = try await pool.withConnection { connection in
                try connection.query("SELECT sealed_secret FROM credentials").rows.map { try $0.decode("sealed_secret", as: [UInt8].self) }
            }
            #expect(sealed.count == 2)
            for bytes in sealed {
                #expect(bytes.count > Self.password.utf8.count)
                #expect(!Data(bytes).contains(Data(Self.password.utf8)))
                #expect(!Data(bytes).contains(Data(typed.utf8)))
            }
        }
    }

    @Test func aSealedSecretCopiedToAnotherRowDoesNotOpen() async throws {
        try await ServiceWithDatabase.run { api, pool in
            let tenant = try await api.tenant()
            let source = try await api.credential(tenant, host: "source.example.com", password: Self.password)
            let target = try await api.credential(tenant, password: "the-targets-own")
            try await api.releasePolicy(tenant, then: #""credentialId": "\#(target)""#)
            try await pool.withConnection { connection in
                _ = try connection.execute(
                    "UPDATE credentials SET sealed_secret = (SELECT sealed_secret FROM credentials WHERE id = $1) WHERE id = $2",
                    [.uuid(UUID(uuidString: source)!), .uuid(UUID(uuidString: target)!)]
                )
            }
            let session = try await api.session(tenant)
            let refused = try await api.decide(tenant, session: session)
            #expect(refused.status == 500)
            #expect(refused.errorCode == "secret_unreadable")
            #expect(!refused.text.contains(Self.password))
            #expect(!refused.text.contains("the-targets-own"))

            // Nothing was recorded as released.
            let page = try await api.call(.get, "/v1/decisions?credentialId=\(target)", key: tenant.adminKey)
            #expect((page["decisions"] as? [Any])?.isEmpty == true)

            // An admin repairs it by setting the secret again.
            let repaired = try await api.call(.patch, "/v1/credentials/\(target)", key: tenant.adminKey, json: ["password": "set-again"])
            #expect(repaired.status == 200)
            #expect(try await api.decided(tenant, session: session).credentialPassword == "set-again")
        }
    }

    @Test func aSealedSecretCopiedToAnotherTenantDoesNotOpen() async throws {
        try await ServiceWithDatabase.run { api, pool in
            let owner = try await api.tenant()
            let source = try await api.credential(owner, password: Self.password)
            let other = try await api.tenant()
            let target = try await api.credential(other, password: "other-tenants-own")
            try await api.releasePolicy(other)
            try await pool.withConnection { connection in
                _ = try connection.execute(
                    "UPDATE credentials SET sealed_secret = (SELECT sealed_secret FROM credentials WHERE id = $1) WHERE id = $2",
                    [.uuid(UUID(uuidString: source)!), .uuid(UUID(uuidString: target)!)]
                )
            }
            let session = try await api.session(other)
            let refused = try await api.decide(other, session: session)
            #expect(refused.status == 500)
            #expect(refused.errorCode == "secret_unreadable")
            #expect(!refused.text.contains(Self.password))
            // Re-saving the credential with its keychain key repairs it in place.
            #expect(try await api.credential(other, password: "saved-again") == target)
            #expect(try await api.decided(other, session: session).credentialPassword == "saved-again")
        }
    }

    @Test func withoutAMasterKeyNothingIsStoredOrReleased() async throws {
        try await TestService.run(configure: { $0.masterKey = nil }) { api in
            let tenant = try await api.tenant()
            let refused = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: ["host": "a.example.com", "account": "a", "password": "p"])
            #expect(refused.status == 503)
            #expect(refused.errorCode == "master_key_unavailable")
        }
    }
}
