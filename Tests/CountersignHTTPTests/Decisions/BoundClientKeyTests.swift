import CountersignPostgres
import Foundation
import Testing

/// A client key per device, bound to its `clientId`: one device's key is neither served nor can
/// replace what another device typed (`permanent`), nor reach its sessions and decisions.
@Suite("Client keys bound to one client")
struct BoundClientKeyTests {
    /// A client key of `tenant` bound to `clientId`, as `tenant` with that key as its client key.
    static func device(_ api: TestAPI, _ tenant: TestAPI.Tenant, clientId: String) async throws -> TestAPI.Tenant {
        let created = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: ["name": clientId, "role": "client", "clientId": clientId])
        try #require(created.status == 201, "\(created)")
        #expect((created["key"] as? [String: Any])?["clientId"] as? String == clientId)
        return TestAPI.Tenant(id: tenant.id, adminKey: tenant.adminKey, clientKey: try #require(created.string("secret")))
    }

    @Test func aDevicesKeyReachesItsOwnClientOnly() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.releasePolicy(tenant, then: #""clientPersistences": ["none", "forSession", "permanent"], "persistence": "none""#)
            let deviceA = try await Self.device(api, tenant, clientId: "device-A")
            let deviceB = try await Self.device(api, tenant, clientId: "device-B")

            let sessionB = try await api.session(deviceB, clientId: "device-B")
            #expect(try await api.submit(deviceB, session: sessionB, user: "alice", password: "typed-on-B", persistence: "permanent").status == 201)
            let decisionB = try #require(try await api.decided(deviceB, session: sessionB).string("decisionId"))

            // Device A cannot claim B's clientId...
            let claimed = try await api.call(.post, "/v1/sessions", key: deviceA.clientKey, json: ["clientId": "device-B"])
            #expect(claimed.status == 403 && claimed.errorCode == "client_id_not_allowed", "\(claimed)")
            // ...nor reach B's session or decision, which look as if they did not exist.
            let space = #"{"host": "intranet.example.com", "port": 443, "protocol": "https", "realm": "Intranet", "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic"}"#
            let calls: [(String, String, String?)] = [
                ("GET", "/v1/sessions/\(sessionB)", nil),
                ("POST", "/v1/sessions/\(sessionB)/challenges", #"{"taskId": "t", "protectionSpace": \#(space)}"#),
                ("POST", "/v1/sessions/\(sessionB)/credentials", #"{"protectionSpace": \#(space), "user": "alice", "password": "planted", "persistence": "permanent"}"#),
                ("POST", "/v1/sessions/\(sessionB)/invalidate", #"{"mode": "cancel"}"#),
                ("POST", "/v1/decisions/\(decisionB)/outcome", #"{"outcome": "rejected", "upstreamStatus": 401}"#),
            ]
            for (method, path, body) in calls {
                let reply = try await api.call(.init(method)!, path, key: deviceA.clientKey, json: body)
                #expect(reply.status == 404 && reply.errorCode == "not_found", "\(method) \(path): \(reply)")
                #expect(!reply.text.contains("typed-on-B"))
            }
            // A's own session is served nothing of B's.
            let sessionA = try await api.session(deviceA, clientId: "device-A")
            let answered = try await api.decided(deviceA, session: sessionA)
            #expect(answered.credentialPassword == nil, "\(answered)")
            // B still has its own, untouched, and its session still answers.
            let later = try await api.session(deviceB, clientId: "device-B")
            #expect(try await api.decided(deviceB, session: later).credentialPassword == "typed-on-B")
            #expect(try await api.call(.get, "/v1/sessions/\(sessionB)", key: deviceB.clientKey).status == 200)
            // A key a fleet shares may still claim any clientId, as documented.
            #expect(try await api.call(.post, "/v1/sessions", key: tenant.clientKey, json: ["clientId": "device-B"]).status == 201)
        }
    }

    /// `café` with é and with e and a combining accent are one string to Swift's `==` and two
    /// clients to the database: a key bound to one must not reach the other.
    @Test func anotherUnicodeSpellingIsAnotherClient() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.releasePolicy(tenant, then: #""clientPersistences": ["none", "forSession", "permanent"], "persistence": "none""#)
            let composed = "caf\u{E9}"
            let decomposed = "cafe\u{301}"
            #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
            let bound = try await Self.device(api, tenant, clientId: composed)
            // The decomposed client saves its own password, through the fleet key.
            let victim = try await api.session(tenant, clientId: decomposed)
            #expect(try await api.submit(tenant, session: victim, user: "alice", password: "typed-decomposed", persistence: "permanent").status == 201)
            let victimDecision = try #require(try await api.decided(tenant, session: victim).string("decisionId"))

            let claimed = try await api.call(.post, "/v1/sessions", key: bound.clientKey, json: ["clientId": decomposed])
            #expect(claimed.status == 403 && claimed.errorCode == "client_id_not_allowed", "\(claimed)")
            #expect(try await api.call(.get, "/v1/sessions/\(victim)", key: bound.clientKey).status == 404)
            #expect(try await api.call(.post, "/v1/decisions/\(victimDecision)/outcome", key: bound.clientKey, json: ["outcome": "rejected"]).status == 404)
            // Its own sessions are served nothing the other spelling saved.
            let own = try await api.session(bound, clientId: composed)
            #expect(try await api.decided(bound, session: own).credentialPassword == nil)
        }
    }

    /// During an upgrade, an instance of the release before the binding looks keys up by their
    /// plain lookup id (`WHERE lookup_id = $1`): a bound key must not be found there, where it
    /// would act as a fleet key, but refused.
    @Test func anInstanceOfTheReleaseBeforeFindsNoBoundKey() async throws {
        try await TestService.withSideAccess { api, side in
            let tenant = try await api.tenant()
            let device = try await Self.device(api, tenant, clientId: "device-A")
            let lookupID = String(device.clientKey.split(separator: "_")[1])
            let fleetLookupID = String(tenant.clientKey.split(separator: "_")[1])
            let found = try await side.withConnection { connection in
                try [lookupID, fleetLookupID].map { id in
                    try connection.query("SELECT count(*)::int8 AS n FROM api_keys WHERE lookup_id = $1", [.text(id)]).rows[0].decode("n", as: Int.self)
                }
            }
            #expect(found == [0, 1])
            // This release finds it, and shows its public prefix as for any key.
            #expect(try await api.call(.post, "/v1/sessions", key: device.clientKey, json: ["clientId": "device-A"]).status == 201)
            let listed = try await api.call(.get, "/v1/keys", key: tenant.adminKey)
            #expect((listed["keys"] as? [[String: Any]])?.contains { $0["prefix"] as? String == "csk_\(lookupID)" } == true, "\(listed)")
        }
    }

    @Test func onlyClientKeysAreBound() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let admin = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: ["name": "a", "role": "admin", "clientId": "device-A"])
            #expect(admin.status == 400 && admin.errorCode == "invalid_field", "\(admin)")
            let blank = try await api.call(.post, "/v1/keys", key: tenant.adminKey, json: ["name": "b", "role": "client", "clientId": ""])
            #expect(blank.status == 400 && blank.errorCode == "invalid_field", "\(blank)")
            let listed = try await api.call(.get, "/v1/keys", key: tenant.adminKey)
            #expect((listed["keys"] as? [[String: Any]])?.allSatisfy { $0["clientId"] == nil || $0["clientId"] is NSNull } == true, "\(listed)")
        }
    }
}
