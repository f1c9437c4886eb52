import CountersignCrypto
import CountersignHTTP
import CountersignPostgres
import Foundation
import Testing

@Suite("Tenants and API keys")
struct TenantAndKeyTests {
    @Test func operatorCreatesListsAndDisablesTenants() async throws {
        try await TestService.run { api in
            let created = try await api.call(.post, "/v1/tenants", key: TestService.operatorKey, json: ["name": "acme"])
            #expect(created.status == 201)
            let id = try #require(created.string("id"))

            let duplicate = try await api.call(.post, "/v1/tenants", key: TestService.operatorKey, json: ["name": "acme"])
            #expect(duplicate.status == 409)
            #expect(duplicate.errorCode == "tenant_name_taken")

            let list = try await api.call(.get, "/v1/tenants", key: TestService.operatorKey)
            let tenants = try #require(list["tenants"] as? [[String: Any]])
            #expect(tenants.map { $0["id"] as? String } == [id])

            let admin = try await api.call(.post, "/v1/tenants/\(id)/keys", key: TestService.operatorKey, json: ["name": "first"])
            let adminKey = try #require(admin.string("secret"))
            #expect(try await api.call(.get, "/v1/keys", key: adminKey).status == 200)

            let disabled = try await api.call(.post, "/v1/tenants/\(id)/disable", key: TestService.operatorKey)
            #expect(disabled.status == 200)
            #expect(disabled.string("disabledAt") != nil)
            let refused = try await api.call(.get, "/v1/keys", key: adminKey)
            #expect(refused.status == 403)
            #expect(refused.errorCode == "tenant_disabled")

            #expect(try await api.call(.post, "/v1/tenants/\(id)/enable", key: TestService.operatorKey).status == 200)
            #expect(try await api.call(.get, "/v1/keys", key: adminKey).status == 200)
        }
    }

    @Test func keysAreShownOnceStoredHashedAndListedWithoutSecret() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let created = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: ["name": "ios", "role": "client"])
            #expect(created.status == 201)
            let secret = try #require(created.string("secret"))
            #expect(secret.hasPrefix("csk_"))
            // 32 random bytes, base64url: at least 43 characters after the prefix.
            #expect(secret.split(separator: "_", maxSplits: 2).last!.count >= 43)
            let key = try #require(created["key"] as? [String: Any])
            #expect(secret.hasPrefix(key["prefix"] as! String))

            let list = try await api.call(.get, "/v1/keys", key: tenant.adminKey)
            let body = String(decoding: list.body, as: UTF8.self)
            #expect(!body.contains(secret))
            #expect(!body.contains(String(secret.split(separator: "_", maxSplits: 2).last!)))
            let keys = try #require(list["keys"] as? [[String: Any]])
            #expect(keys.count == 3)
            #expect(keys.allSatisfy { $0["secret"] == nil })
        }
    }

    @Test func keysAndTenantsComeInPagesOldestFirst() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            for name in ["k1", "k2", "k3"] {
                #expect(try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: ["name": name, "role": "client"]).status == 201)
            }
            let keys = try await api.allPages("/v1/keys", "keys", key: tenant.adminKey, limit: 2)
            #expect(keys.entries.compactMap { $0["name"] as? String } == ["admin", "fleet", "k1", "k2", "k3"])
            #expect(keys.pages == 3)

            // Other tests create tenants meanwhile: ours must each appear once, in order.
            let ours = [tenant.id, try await api.tenant().id, try await api.tenant().id]
            let tenants = try await api.allPages("/v1/tenants", "tenants", key: TestService.operatorKey, limit: 2).entries.compactMap { $0["id"] as? String }
            #expect(Set(tenants).count == tenants.count, "no tenant on two pages")
            #expect(tenants.filter(ours.contains) == ours)
            #expect(try await api.call(.get, "/v1/tenants?cursor=bm90LWEtY3Vyc29y", key: TestService.operatorKey).errorCode == "invalid_query")
            for limit in ["1001", "0", "+5", "-1", " 5", "5x", "0x10"] {
                #expect(try await api.call(.get, "/v1/keys?limit=\(limit.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", key: tenant.adminKey).errorCode == "invalid_query", "limit=\(limit)")
            }
            #expect(try await api.call(.get, "/v1/keys?limit=05", key: tenant.adminKey).status == 200)
        }
    }

    @Test func rolesAreEnforced() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            // A client key may not manage keys; an admin key may not open sessions.
            let clientOnAdmin = try await api.call(.get, "/v1/keys", key: tenant.clientKey)
            #expect(clientOnAdmin.status == 403)
            #expect(clientOnAdmin.errorCode == "insufficient_role")
            let adminOnClient = try await api.call(.post, "/v1/sessions", key: tenant.adminKey, json: ["clientId": "x"])
            #expect(adminOnClient.status == 403)
            // Tenant keys cannot reach the operator API; the operator key cannot reach tenant APIs.
            #expect(try await api.call(.get, "/v1/tenants", key: tenant.adminKey).status == 403)
            #expect(try await api.call(.get, "/v1/keys", key: TestService.operatorKey).status == 403)
        }
    }

    @Test func revokedKeysStopWorking() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let created = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: ["name": "temp", "role": "admin"])
            let secret = try #require(created.string("secret"))
            let id = try #require((created["key"] as? [String: Any])?["id"] as? String)
            #expect(try await api.call(.get, "/v1/keys", key: secret).status == 200)

            let revoked = try await api.call(.delete, "/v1/keys/\(id)", key: tenant.adminKey)
            #expect(revoked.status == 200)
            let revokedAt = try #require(revoked.string("revokedAt"))
            let refused = try await api.call(.get, "/v1/keys", key: secret)
            #expect(refused.status == 401)
            #expect(refused.errorCode == "invalid_api_key")
            // Revoking again keeps the first time.
            #expect(try await api.call(.delete, "/v1/keys/\(id)", key: tenant.adminKey).string("revokedAt") == revokedAt)
        }
    }

    /// Another instance may take a disabled tenant's keys until it hears of the change
    /// (`AccessChangeTests`), but it releases no credential to them from the moment the tenant is
    /// disabled.
    @Test func aDisabledTenantGetsNoCredentialFromAnotherInstance() async throws {
        try await Self.twoInstances(releasing: "disabled-tenant-pw") { first, second, tenant in
            let session = try await second.session(tenant)
            #expect(try await second.decided(tenant, session: session).credentialPassword == "disabled-tenant-pw")
            #expect(try await first.call(.post, "/v1/tenants/\(tenant.id)/disable", key: TestService.operatorKey).status == 200)
            let refused = try await second.decide(tenant, session: session, ChallengeBody(taskId: "task-2", protectionSpace: .basic))
            #expect(refused.status == 403 && refused.errorCode == "tenant_disabled", "\(refused)")
            #expect(!String(decoding: refused.body, as: UTF8.self).contains("disabled-tenant-pw"))
            #expect(try await first.call(.post, "/v1/tenants/\(tenant.id)/enable", key: TestService.operatorKey).status == 200)
            #expect(try await second.decided(tenant, session: session, taskId: "task-3").credentialPassword == "disabled-tenant-pw")
        }
    }

    /// Two instances of one deployment (one database, one master key) that keep keys for ten
    /// minutes, and a tenant whose policy releases `password` from session memory.
    static func twoInstances(
        releasing password: String,
        _ body: @escaping @Sendable (_ first: TestAPI, _ second: TestAPI, _ tenant: TestAPI.Tenant) async throws -> Void
    ) async throws {
        try await twoInstances(releasing: password) { first, second, tenant, _ in try await body(first, second, tenant) }
    }

    /// As above, with `side`, a pool of its own on the instances' database.
    static func twoInstances(
        releasing password: String,
        _ body: @escaping @Sendable (_ first: TestAPI, _ second: TestAPI, _ tenant: TestAPI.Tenant, _ side: PostgresPool) async throws -> Void
    ) async throws {
        var configuration = try await TestService.configuration()
        configuration.apiKeyCacheTTL = .seconds(600)
        let one = configuration
        let side = PostgresPool(configuration: PostgresConfiguration(connectionString: configuration.database.connectionString, poolSize: 1))
        try await TestService.run(configuration: one) { first in
            let tenant = try await first.tenant()
            _ = try await first.credential(tenant, password: password)
            try await first.releasePolicy(tenant)
            try await TestService.run(configuration: one) { second in try await body(first, second, tenant, side) }
        }
        await side.close()
    }

    /// Another instance may take a revoked key until it hears of the revocation
    /// (`AccessChangeTests`), but it releases no credential to it from the moment it is revoked.
    @Test func aRevokedKeyGetsNoCredentialFromAnotherInstance() async throws {
        try await Self.twoInstances(releasing: "revoked-key-pw") { first, second, tenant in
            let session = try await second.session(tenant)
            #expect(try await second.decided(tenant, session: session).credentialPassword == "revoked-key-pw")
            try await first.revokeClientKey(tenant)
            let refused = try await second.decide(tenant, session: session, ChallengeBody(taskId: "task-2", protectionSpace: .basic))
            #expect(refused.status == 401 && refused.errorCode == "invalid_api_key", "\(refused)")
            #expect(!String(decoding: refused.body, as: UTF8.self).contains("revoked-key-pw"))
        }
    }

    /// With the key cache on, a wrong secret presented under a real key's public prefix must not
    /// lock the real key out, and a revocation on this instance still takes effect at once.
    @Test func theKeyCacheRemembersKeysNotVerdicts() async throws {
        try await TestService.run(configure: { $0.apiKeyCacheTTL = .seconds(600) }) { api in
            let tenant = try await api.tenant()
            let prefix = tenant.adminKey.split(separator: "_").prefix(2).joined(separator: "_")
            let forged = prefix + "_" + String(repeating: "A", count: 43)
            #expect(try await api.call(.get, "/v1/keys", key: forged).status == 401)
            #expect(try await api.call(.get, "/v1/keys", key: tenant.adminKey).status == 200)
            #expect(try await api.call(.get, "/v1/keys", key: forged).status == 401)
            // An unknown key is refused again from memory, and stays refused.
            let unknown = "csk_zzzzzzzzzzzz_" + String(repeating: "B", count: 43)
            #expect(try await api.call(.get, "/v1/keys", key: unknown).status == 401)
            #expect(try await api.call(.get, "/v1/keys", key: unknown).status == 401)

            let created = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: ["name": "temp", "role": "admin"])
            let secret = try #require(created.string("secret"))
            let id = try #require((created["key"] as? [String: Any])?["id"] as? String)
            #expect(try await api.call(.get, "/v1/keys", key: secret).status == 200)
            #expect(try await api.call(.delete, "/v1/keys/\(id)", key: tenant.adminKey).status == 200)
            #expect(try await api.call(.get, "/v1/keys", key: secret).status == 401)
        }
    }

    @Test func anotherTenantsObjectsAreNotFound() async throws {
        try await TestService.run { api in
            let one = try await api.tenant()
            let two = try await api.tenant()
            let list = try await api.call(.get, "/v1/keys", key: one.adminKey)
            let oneKeyID = try #require((list["keys"] as? [[String: Any]])?.first?["id"] as? String)
            let get = try await api.call(.get, "/v1/keys/\(oneKeyID)", key: two.adminKey)
            #expect(get.status == 404)
            #expect(get.errorCode == "not_found")
            #expect(try await api.call(.delete, "/v1/keys/\(oneKeyID)", key: two.adminKey).status == 404)
            #expect(try await api.call(.get, "/v1/keys/\(oneKeyID)", key: one.adminKey).status == 200)
        }
    }

    /// The operator key is held as its unsalted SHA-256: a dump showing that would let anyone
    /// who reads it guess the key offline, at a few billion tries a second.
    @Test func theOperatorKeyShowsNothingOfItselfWhenPrintedOrDumped() throws {
        let key = try OperatorKey(TestService.operatorKey)
        var dumped = ""
        dump(key, to: &dumped)
        let hashBytes = Digest.hash(.sha256, TestService.operatorKey).map { "- \($0)" }
        for text in [String(describing: key), String(reflecting: key), dumped] {
            #expect(text.contains("redacted"), "\(text)")
            #expect(hashBytes.filter(text.contains).count < 8, "\(text)")
        }
    }

    @Test func missingAndWrongKeysAre401() async throws {
        try await TestService.run { api in
            let missing = try await api.call(.get, "/v1/keys")
            #expect(missing.status == 401)
            #expect(missing.errorCode == "unauthenticated")
            #expect(missing.headers[.wwwAuthenticate] == "Bearer realm=\"countersign\"")
            let wrongScheme = try await api.call(.get, "/v1/keys", headers: [.authorization: "Basic dXNlcjpwYXNz"])
            #expect(wrongScheme.errorCode == "unauthenticated")
            let forged = try await api.call(.get, "/v1/keys", key: "csk_abcdefghijkm_" + String(repeating: "A", count: 43))
            #expect(forged.status == 401)
            #expect(forged.errorCode == "invalid_api_key")
            let garbage = try await api.call(.get, "/v1/keys", key: "not-a-key")
            #expect(garbage.errorCode == "invalid_api_key")
        }
    }
}
