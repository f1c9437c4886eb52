import Foundation
import Testing

@Suite("Tenant isolation")
struct TenantIsolationTests {
    @Test func noIdOfOneTenantWorksInAnother() async throws {
        try await TestService.run { api in
            let owner = try await api.tenant()
            let credential = try await api.credential(owner, password: "owner-only-secret")
            try await api.releasePolicy(owner, then: #""maxFailures": 5, "credentialId": "\#(credential)""#)
            let session = try await api.session(owner)
            let decision = try #require(try await api.decided(owner, session: session).string("decisionId"))
            try await api.outcome(owner, decision: decision, "rejected")
            let counter = try #require(try await api.counters(owner).first?["id"] as? String)

            let intruder = try await api.tenant()
            let space = #"{"host": "intranet.example.com", "port": 443, "protocol": "https", "realm": "Intranet", "authenticationMethod": "\#(Method.basic)"}"#
            let clientCalls: [(String, String, String?)] = [
                ("GET", "/v1/sessions/\(session)", nil),
                ("POST", "/v1/sessions/\(session)/invalidate", #"{"mode": "cancel"}"#),
                ("POST", "/v1/sessions/\(session)/challenges", #"{"taskId": "t", "protectionSpace": \#(space)}"#),
                ("POST", "/v1/sessions/\(session)/credentials", #"{"protectionSpace": \#(space), "user": "u", "password": "p", "persistence": "forSession"}"#),
                ("POST", "/v1/decisions/\(decision)/outcome", #"{"outcome": "accepted"}"#),
            ]
            let adminCalls: [(String, String, String?)] = [
                ("GET", "/v1/credentials/\(credential)", nil),
                ("PATCH", "/v1/credentials/\(credential)", #"{"password": "hijacked"}"#),
                ("DELETE", "/v1/credentials/\(credential)", nil),
                ("GET", "/v1/credentials/\(credential)/history", nil),
                ("GET", "/v1/decisions/\(decision)", nil),
                ("GET", "/v1/counters/\(counter)", nil),
                ("POST", "/v1/counters/\(counter)/reset", nil),
                ("POST", "/v1/policy/explain", #"{"sessionId": "\#(session)", "challenge": {"taskId": "t", "protectionSpace": \#(space)}}"#),
            ]
            for (calls, key) in [(clientCalls, intruder.clientKey), (adminCalls, intruder.adminKey)] {
                for (method, path, body) in calls {
                    let reply = try await api.call(.init(method)!, path, key: key, json: body)
                    #expect(reply.status == 404, "\(method) \(path): \(reply)")
                    #expect(reply.errorCode == "not_found")
                    #expect(!reply.text.contains("owner-only-secret"))
                }
            }
            // Listings filtered by the other tenant's ids are simply empty.
            for path in ["/v1/decisions?sessionId=\(session)", "/v1/decisions?credentialId=\(credential)"] {
                #expect((try await api.call(.get, path, key: intruder.adminKey)["decisions"] as? [Any])?.isEmpty == true)
            }
            #expect((try await api.call(.get, "/v1/counters?credentialId=\(credential)", key: intruder.adminKey)["counters"] as? [Any])?.isEmpty == true)
            #expect((try await api.call(.get, "/v1/credentials", key: intruder.adminKey)["credentials"] as? [Any])?.isEmpty == true)
            let naming = try await api.call(
                .put, "/v1/policy", key: intruder.adminKey,
                json: #"{"version": 0, "rules": [{"id": "r", "match": {}, "then": {"disposition": "useCredential", "credentialId": "\#(credential)"}}]}"#
            )
            #expect(naming.errorCode == "unknown_credential_reference")
            // The intruder's catch-all rule does not reach the owner's credential either.
            try await api.releasePolicy(intruder)
            let own = try await api.session(intruder)
            #expect(try await api.decided(intruder, session: own)["credential"] is NSNull)

            // And nothing changed for the owner.
            #expect(try await api.call(.get, "/v1/sessions/\(session)", key: owner.clientKey).string("state") == "active")
            #expect(try await api.decisionRecord(owner, decision).string("outcome") == "rejected")
            #expect(try await api.counters(owner).first?["failures"] as? Int == 1)
            #expect(try await api.decided(owner, session: session, taskId: "t2").credentialPassword == "owner-only-secret")
        }
    }
}
