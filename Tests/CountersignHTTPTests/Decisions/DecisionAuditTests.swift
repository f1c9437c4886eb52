import Foundation
import Testing

@Suite("Decision audit")
struct DecisionAuditTests {
    static func ids(_ reply: Reply) -> [String] {
        (reply["decisions"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    @Test func filtersAndCursorPagination() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let credentialID = try await api.credential(tenant, password: "audit-secret-5e1")
            try await api.policy(
                tenant,
                rules: #"[{"id": "intranet", "match": {"host": "intranet.example.com"}, "then": {"disposition": "useCredential", "persistence": "none"}}, {"id": "rest", "match": {}, "then": {"disposition": "rejectProtectionSpace"}}]"#
            )
            let alice = try await api.session(tenant, clientId: "alice")
            let bob = try await api.session(tenant, clientId: "bob")
            var made: [String] = []
            for index in 0..<4 {
                made.append(try #require(try await api.decided(tenant, session: alice, taskId: "a\(index)").string("decisionId")))
            }
            // Apart from both sides by more than the millisecond the API's timestamps keep.
            try await Task.sleep(for: .milliseconds(20))
            let middle = Date()
            try await Task.sleep(for: .milliseconds(20))
            for index in 0..<3 {
                made.append(try #require(try await api.decided(tenant, session: bob, taskId: "b\(index)", space: Space.basic.with { $0.host = "other.example.org" }).string("decisionId")))
            }
            // Concurrent decisions share one commit (and timestamp): paging must still see each once.
            let burst = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<12 {
                    group.addTask { try await api.decided(tenant, session: alice, taskId: "burst\(index)").string("decisionId") }
                }
                return try await group.reduce(into: [String]()) { if let id = $1 { $0.append(id) } }
            }
            made += burst
            #expect(made.count == 19)

            let all = try await api.call(.get, "/v1/decisions?limit=1000", key: tenant.adminKey)
            #expect(Set(Self.ids(all)) == Set(made))
            #expect(!all.text.contains("audit-secret-5e1"))
            let created = (all["decisions"] as? [[String: Any]] ?? []).compactMap { $0["createdAt"] as? String }
            #expect(created == created.sorted(by: >), "newest first")

            let (paged, pages) = try await api.allPages("/v1/decisions", "decisions", key: tenant.adminKey, limit: 4)
            #expect(paged.compactMap { $0["id"] as? String } == Self.ids(all))
            #expect(pages == 5)

            let bySession = try await api.call(.get, "/v1/decisions?sessionId=\(bob)", key: tenant.adminKey)
            #expect(Set(Self.ids(bySession)) == Set(made[4..<7]))
            let byClient = try await api.call(.get, "/v1/decisions?clientId=alice&limit=1000", key: tenant.adminKey)
            #expect(Self.ids(byClient).count == 16)
            let byCredential = try await api.call(.get, "/v1/decisions?credentialId=\(credentialID)&limit=1000", key: tenant.adminKey)
            #expect(Self.ids(byCredential).count == 16)
            let byDisposition = try await api.call(.get, "/v1/decisions?disposition=rejectProtectionSpace", key: tenant.adminKey)
            #expect(Set(Self.ids(byDisposition)) == Set(made[4..<7]))
            let stamp = middle.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
            let before = try await api.call(.get, "/v1/decisions?until=\(stamp)", key: tenant.adminKey)
            #expect(Set(Self.ids(before)) == Set(made[0..<4]))
            let after = try await api.call(.get, "/v1/decisions?since=\(stamp)&limit=1000", key: tenant.adminKey)
            #expect(Self.ids(after).count == 15)
            let combined = try await api.call(.get, "/v1/decisions?since=\(stamp)&clientId=alice&limit=1000", key: tenant.adminKey)
            #expect(Set(Self.ids(combined)) == Set(burst))

            // A cursor goes with the filters it was given out under: with others it would start
            // that listing at this one's position, skipping what lies between.
            let firstOfAlice = try await api.call(.get, "/v1/decisions?clientId=alice&limit=1", key: tenant.adminKey)
            let cursor = try #require(firstOfAlice.string("nextCursor"))
            #expect(try await api.call(.get, "/v1/decisions?clientId=alice&limit=1&cursor=\(cursor)", key: tenant.adminKey).status == 200)
            for query in ["clientId=bob", "", "sessionId=\(bob)"] {
                let other = try await api.call(.get, "/v1/decisions?\(query)&cursor=\(cursor)", key: tenant.adminKey)
                #expect(other.status == 400 && other.errorCode == "invalid_query", "\(query): \(other)")
            }

            let record = try await api.decisionRecord(tenant, made[0])
            #expect(record.string("clientId") == "alice")
            #expect(record.string("sessionId") == alice)
            #expect(record.string("credentialId") == credentialID)
            #expect(record.string("kind") == "challenge")
            #expect((record["rule"] as? [String: Any])?["id"] as? String == "intranet")
            #expect(record["outcome"] is NSNull)
        }
    }

    @Test func badQueriesAreRefused() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            // A filter sent empty (a form's blank field) is refused too, not read as left out.
            for query in [
                "limit=0", "limit=1001", "limit=x", "cursor=bm9wZQ", "cursor=%%%", "sessionId=12", "disposition=maybe", "since=yesterday",
                "sessionId=", "clientId=", "credentialId=", "disposition=", "since=", "until=", "limit=", "cursor=", "clientId", "clientId=alice&sessionId=",
            ] {
                let reply = try await api.call(.get, "/v1/decisions?\(query)", key: tenant.adminKey)
                #expect(reply.status == 400, "\(query)")
                #expect(reply.errorCode == "invalid_query", "\(query): \(reply)")
            }
            #expect(try await api.call(.get, "/v1/decisions", key: tenant.clientKey).status == 403)
            #expect(try await api.call(.get, "/v1/decisions/\(UUID())", key: tenant.adminKey).status == 404)
        }
    }
}
