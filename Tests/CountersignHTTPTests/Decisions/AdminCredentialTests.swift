import Foundation
import Testing

@Suite("Admin credentials")
struct AdminCredentialTests {
    static let body = #"{"host": "Intranet.Example.com", "protocol": "https", "realm": "Intranet", "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic", "account": "svc", "password": "first-secret", "label": "service account"}"#

    @Test func savingTheSameKeyUpdatesInPlaceKeepingIdHistoryAndCounters() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let created = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: Self.body)
            #expect(created.status == 201)
            let id = try #require(created.string("id"))
            #expect(created.string("host") == "intranet.example.com")
            #expect(created.string("owner") == "tenant")
            #expect(created.int("secretVersion") == 1)

            try await api.releasePolicy(tenant, then: #""maxFailures": 5, "persistence": "none""#)
            let session = try await api.session(tenant)
            let decision = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            try await api.outcome(tenant, decision: decision, "rejected")

            // The same key and secret, a new label: same id, counters kept.
            let relabelled = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: Self.body.replacingOccurrences(of: "service account", with: "renamed"))
            #expect(relabelled.status == 200)
            #expect(relabelled.string("id") == id)
            #expect(relabelled.string("label") == "renamed")
            #expect(relabelled.int("secretVersion") == 1)
            #expect(try await api.counters(tenant).first?["failures"] as? Int == 1)
            // Saved again without a label (a vault sync sending the password alone), it keeps it.
            let resynced = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: Self.body.replacingOccurrences(of: #", "label": "service account""#, with: ""))
            #expect(resynced.status == 200)
            #expect(resynced.string("label") == "renamed")

            // A different account is a different credential.
            let other = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: Self.body.replacingOccurrences(of: #""svc""#, with: #""svc2""#))
            #expect(other.status == 201)
            #expect(other.string("id") != id)

            let events = try await api.history(tenant, credential: id).compactMap { $0["event"] as? String }
            #expect(events == ["created", "updated"], "saving it again unchanged records nothing")
        }
    }

    @Test func aNewSecretResetsCountersAndUnblocks() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant, password: "old-secret")
            try await api.releasePolicy(tenant, then: #""maxFailures": 1, "persistence": "none""#)
            let session = try await api.session(tenant)
            let decision = try #require(try await api.decided(tenant, session: session).string("decisionId"))
            try await api.outcome(tenant, decision: decision, "rejected", upstreamStatus: 401)
            #expect(try await api.decided(tenant, session: session).string("disposition") == "cancelAuthenticationChallenge")

            let patched = try await api.call(.patch, "/v1/credentials/\(id)", key: tenant.adminKey, json: ["password": "new-secret"])
            #expect(patched.status == 200)
            #expect(patched.string("id") == id)
            #expect(patched.int("secretVersion") == 2)
            #expect(!patched.text.contains("new-secret"))

            let released = try await api.decided(tenant, session: session)
            #expect(released.credentialPassword == "new-secret")
            let counter = try #require(try await api.counters(tenant).first)
            #expect(counter["failures"] as? Int == 0)
            #expect(counter["blockedUntil"] is NSNull)
            #expect(counter["totalRejections"] as? Int == 1)

            let history = try await api.history(tenant, credential: id)
            let change = try #require(history.last)
            #expect(change["event"] as? String == "secret_changed")
            #expect((change["details"] as? [String: String])?["counters"] == "reset")
            #expect(history.contains { $0["event"] as? String == "blocked" })

            // Saving the same secret again changes no version.
            let same = try await api.call(.patch, "/v1/credentials/\(id)", key: tenant.adminKey, json: ["password": "new-secret"])
            #expect(same.int("secretVersion") == 2)
        }
    }

    @Test func upsertingANewSecretUnblocksToo() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant, password: "old-secret")
            try await api.releasePolicy(tenant, then: #""maxFailures": 1, "persistence": "none""#)
            let session = try await api.session(tenant)
            try await api.outcome(tenant, decision: try #require(try await api.decided(tenant, session: session).string("decisionId")), "rejected")
            #expect(try await api.decided(tenant, session: session)["credential"] is NSNull)
            #expect(try await api.credential(tenant, password: "new-secret") == id)
            #expect(try await api.decided(tenant, session: session).credentialPassword == "new-secret")
        }
    }

    @Test func listingsAndReadsNeverShowTheSecret() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant, password: "never-shown-7f3a")
            _ = try await api.credential(tenant, host: "files.example.com", account: "files", password: "also-hidden-9c1d")
            let session = try await api.session(tenant)
            _ = try await api.submit(tenant, session: session, user: "alice", password: "typed-hidden-2b8e", persistence: "forSession")
            let secrets = ["never-shown-7f3a", "also-hidden-9c1d", "typed-hidden-2b8e"]
            let replies = [
                try await api.call(.get, "/v1/credentials", key: tenant.adminKey),
                try await api.call(.get, "/v1/credentials/\(id)", key: tenant.adminKey),
                try await api.call(.get, "/v1/credentials/\(id)/history", key: tenant.adminKey),
                try await api.call(.get, "/v1/credentials?host=files.example.com", key: tenant.adminKey),
            ]
            for reply in replies {
                #expect(reply.status == 200)
                for secret in secrets { #expect(!reply.text.contains(secret)) }
                #expect(!reply.text.contains("\"password\":"))
            }
            let filtered = try #require(replies[3]["credentials"] as? [[String: Any]])
            #expect(filtered.map { $0["account"] as? String } == ["files"])
            let byAccount = try await api.call(.get, "/v1/credentials?account=alice", key: tenant.adminKey)
            #expect((byAccount["credentials"] as? [[String: Any]])?.first?["owner"] as? String == "session")
        }
    }

    @Test func credentialsComeInPagesNewestFirstWithTheirFilters() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            var made: [String] = []
            for account in ["a1", "a2", "a3", "a4", "a5"] {
                made.append(try await api.credential(tenant, account: account))
            }
            _ = try await api.credential(tenant, host: "files.example.com", account: "a6")
            let intranet = try await api.allPages("/v1/credentials?host=intranet.example.com", "credentials", key: tenant.adminKey, limit: 2)
            #expect(intranet.entries.compactMap { $0["id"] as? String } == made.reversed(), "newest first, each once")
            #expect(intranet.pages == 3)
            let all = try await api.allPages("/v1/credentials", "credentials", key: tenant.adminKey, limit: 6)
            #expect(all.entries.count == 6)
            #expect(all.pages == 1, "a page that holds the rest has no next cursor")
            #expect(try await api.call(.get, "/v1/credentials?cursor=x", key: tenant.adminKey).errorCode == "invalid_query")
        }
    }

    @Test func historyComesInPagesOldestFirstAndOutlivesTheCredential() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant)
            for label in ["one", "two", "three"] {
                #expect(try await api.call(.patch, "/v1/credentials/\(id)", key: tenant.adminKey, json: ["label": label]).status == 200)
            }
            #expect(try await api.call(.delete, "/v1/credentials/\(id)", key: tenant.adminKey).status == 204)
            let history = try await api.allPages("/v1/credentials/\(id)/history", "history", key: tenant.adminKey, limit: 2)
            #expect(history.entries.compactMap { $0["event"] as? String } == ["created", "updated", "updated", "updated", "deleted"])
            #expect(history.pages == 3)
            #expect(try await api.call(.get, "/v1/credentials/\(UUID().text)/history", key: tenant.adminKey).status == 404)
            let badCursor = try await api.call(.get, "/v1/credentials/\(id)/history?cursor=bm90LWEtY3Vyc29y", key: tenant.adminKey)
            #expect(badCursor.errorCode == "invalid_query")
            // Another credential's history does not start at this one's position.
            let other = try await api.credential(tenant, account: "other")
            let page = try await api.call(.get, "/v1/credentials/\(id)/history?limit=1", key: tenant.adminKey)
            let cursor = try #require(page.string("nextCursor"))
            #expect(try await api.call(.get, "/v1/credentials/\(other)/history?cursor=\(cursor)", key: tenant.adminKey).errorCode == "invalid_query")
        }
    }

    @Test func deleteIsRefusedWhileARuleNamesIt() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""credentialId": "\#(id)""#)
            let refused = try await api.call(.delete, "/v1/credentials/\(id)", key: tenant.adminKey)
            #expect(refused.status == 409)
            #expect(refused.errorCode == "credential_in_use")
            #expect(try await api.call(.get, "/v1/credentials/\(id)", key: tenant.adminKey).status == 200)

            try await api.releasePolicy(tenant)
            #expect(try await api.call(.delete, "/v1/credentials/\(id)", key: tenant.adminKey).status == 204)
            #expect(try await api.call(.get, "/v1/credentials/\(id)", key: tenant.adminKey).status == 404)
            #expect(try await api.call(.delete, "/v1/credentials/\(id)", key: tenant.adminKey).status == 404)
            let session = try await api.session(tenant)
            #expect(try await api.decided(tenant, session: session)["credential"] is NSNull)
            // A policy cannot name it any more.
            let stale = try await api.call(
                .put, "/v1/policy", key: tenant.adminKey,
                json: #"{"version": 2, "rules": [{"id": "r", "match": {}, "then": {"disposition": "useCredential", "credentialId": "\#(id)"}}]}"#
            )
            #expect(stale.errorCode == "unknown_credential_reference")
        }
    }

    @Test func aFullyQualifiedHostIsTheSameHostForRulesCredentialsAndCounters() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let saved = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: #"{"host": "Intranet.Example.com.", "account": "svc", "password": "fqdn-secret"}"#)
            #expect(saved.status == 201)
            #expect(saved.string("host") == "intranet.example.com")
            let id = try #require(saved.string("id"))
            let again = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: #"{"host": "intranet.example.com", "account": "svc", "password": "fqdn-secret"}"#)
            #expect(again.status == 200 && again.string("id") == id, "one keychain key for both spellings: \(again)")
            let listed = try await api.call(.get, "/v1/credentials?host=INTRANET.example.com.", key: tenant.adminKey)
            #expect((listed["credentials"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [id])

            // A rule refusing the host holds for its FQDN too; the catch-all after it does not answer.
            try await api.policy(
                tenant,
                rules: #"[{"id": "refused", "match": {"host": "*.example.com"}, "then": {"disposition": "rejectProtectionSpace"}}, {"id": "all", "match": {}, "then": {"disposition": "useCredential", "credentialId": "\#(id)"}}]"#
            )
            let session = try await api.session(tenant)
            let fqdn = try await api.decided(tenant, session: session, space: Space.basic.with { $0.host = "www.example.com." })
            #expect(fqdn.string("disposition") == "rejectProtectionSpace", "\(fqdn)")
            #expect(fqdn.credentialPassword == nil)

            // Rejections under either spelling count on one counter.
            try await api.releasePolicy(tenant, then: #""maxFailures": 5, "persistence": "none""#)
            for host in ["intranet.example.com", "intranet.example.com."] {
                let decision = try await api.decided(tenant, session: session, taskId: host, space: Space.basic.with { $0.host = host })
                #expect(decision.credentialPassword == "fqdn-secret")
                try await api.outcome(tenant, decision: try #require(decision.string("decisionId")), "rejected")
            }
            let counters = try await api.counters(tenant)
            #expect(counters.count == 1 && counters.first?["failures"] as? Int == 2, "\(counters)")
        }
    }

    @Test func concurrentEditsOfDifferentFieldsAllStay() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant)
            // Each round edits four attributes at once, one per request: a PATCH says only what it
            // changes, so none may put back what another changed meanwhile.
            for round in 1...8 {
                let edits = [#"{"port": \#(8000 + round)}"#, #"{"realm": "realm-\#(round)"}"#, #"{"path": "/p\#(round)"}"#, #"{"protocol": "proto\#(round)"}"#]
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for edit in edits {
                        group.addTask { try await api.call(.patch, "/v1/credentials/\(id)", key: tenant.adminKey, json: edit).status }
                    }
                    for try await status in group { #expect(status == 200) }
                }
                let saved = try await api.call(.get, "/v1/credentials/\(id)", key: tenant.adminKey)
                #expect(saved.int("port") == 8000 + round, "round \(round): \(saved)")
                #expect(saved.string("realm") == "realm-\(round)", "round \(round): \(saved)")
                #expect(saved.string("path") == "/p\(round)", "round \(round): \(saved)")
                #expect(saved.string("protocol") == "proto\(round)", "round \(round): \(saved)")
            }
        }
    }

    @Test func badCredentialsAreRefused() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let cases: [(String, String)] = [
                (#"{"host": "*.example.com", "account": "a", "password": "p"}"#, "invalid_field"),
                (#"{"host": "a.example.com", "password": "p"}"#, "missing_field"),
                (#"{"host": "a.example.com", "account": "a"}"#, "missing_field"),
                (#"{"host": "a.example.com", "account": "a", "password": "p", "secret": "x"}"#, "unknown_field"),
                (#"{"host": "a.example.com", "account": "a", "password": "p", "port": 99999}"#, "invalid_field"),
                (#"{"host": "a.example.com", "account": "a", "password": "p", "authenticationMethod": "Bogus"}"#, "invalid_field"),
                (#"{"host": "a.example.com", "account": "a", "password": "p", "authenticationMethod": "NSURLAuthenticationMethodServerTrust"}"#, "invalid_field"),
                (#"{"host": "a.example.com", "account": "a", "password": "p", "authenticationMethod": "NSURLAuthenticationMethodClientCertificate"}"#, "invalid_field"),
                (#"{"host": "a.example.com", "account": "a", "password": "\#(String(repeating: "x", count: 4097))"}"#, "invalid_field"),
            ]
            for (body, code) in cases {
                let reply = try await api.call(.post, "/v1/credentials", key: tenant.adminKey, json: body)
                #expect(reply.status == 400, "\(body)")
                #expect(reply.errorCode == code, "\(body.prefix(80)): \(reply)")
            }
            #expect(try await api.call(.post, "/v1/credentials", key: tenant.clientKey, json: #"{"host": "a", "account": "a", "password": "p"}"#).status == 403)
            #expect(try await api.call(.patch, "/v1/credentials/\(UUID())", key: tenant.adminKey, json: ["label": "x"]).status == 404)

            // Moving a credential onto another's key is a conflict.
            let first = try await api.credential(tenant, account: "one")
            _ = try await api.credential(tenant, account: "two")
            let clash = try await api.call(.patch, "/v1/credentials/\(first)", key: tenant.adminKey, json: ["account": "two"])
            #expect(clash.status == 409)
            #expect(clash.errorCode == "credential_conflict")
            // A password is never saved for a method no password answers.
            let tlsMethod = try await api.call(.patch, "/v1/credentials/\(first)", key: tenant.adminKey, json: ["authenticationMethod": "NSURLAuthenticationMethodServerTrust"])
            #expect(tlsMethod.status == 400 && tlsMethod.errorCode == "invalid_field", "\(tlsMethod)")
            // Clearing an optional attribute with null.
            let withPort = try await api.call(.patch, "/v1/credentials/\(first)", key: tenant.adminKey, json: #"{"port": 8443}"#)
            #expect(withPort.int("port") == 8443)
            let cleared = try await api.call(.patch, "/v1/credentials/\(first)", key: tenant.adminKey, json: #"{"port": null}"#)
            #expect(cleared["port"] is NSNull)
            // A field every credential has cannot be cleared: null is refused, not ignored.
            for field in ["password", "account", "host", "isProxy"] {
                let refused = try await api.call(.patch, "/v1/credentials/\(first)", key: tenant.adminKey, json: #"{"\#(field)": null}"#)
                #expect(refused.status == 400 && refused.errorCode == "missing_field", "\(field): \(refused)")
            }
        }
    }
}
