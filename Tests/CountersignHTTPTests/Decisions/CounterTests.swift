import CountersignStorage
import Foundation
import Testing

@Suite("Rejection counters")
struct CounterTests {
    @Test func countersListTheClientsThatReportedRejections() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant)
            let otherID = try await api.credential(tenant, host: "files.example.com", account: "files")
            try await api.releasePolicy(tenant, then: #""maxFailures": 10, "persistence": "none""#)
            for (client, rejections) in [("alice", 2), ("bob", 1)] {
                let session = try await api.session(tenant, clientId: client)
                for index in 0..<rejections {
                    let decision = try #require(try await api.decided(tenant, session: session, taskId: "t\(index)").string("decisionId"))
                    try await api.outcome(tenant, decision: decision, "rejected", upstreamStatus: 401)
                }
            }
            let files = try await api.session(tenant, clientId: "carol")
            let filesDecision = try #require(try await api.decided(tenant, session: files, space: Space.basic.with { $0.host = "files.example.com" }).string("decisionId"))
            try await api.outcome(tenant, decision: filesDecision, "rejected")

            let all = try await api.counters(tenant)
            #expect(all.count == 2)
            let counter = try #require(try await api.counters(tenant, credential: id).first)
            #expect(counter["credentialId"] as? String == id)
            #expect(counter["account"] as? String == "svc")
            #expect(counter["host"] as? String == "intranet.example.com")
            #expect(counter["protectionSpace"] as? String == "origin|https|intranet.example.com|443|Intranet|\(Method.basic)")
            #expect(counter["failures"] as? Int == 3)
            #expect(counter["totalRejections"] as? Int == 3)
            #expect(counter["blockedUntil"] is NSNull)
            #expect(counter["blocks"] as? Int == 0)
            let clients = try #require(counter["clients"] as? [[String: Any]])
            let byClient = Dictionary(uniqueKeysWithValues: clients.map { ($0["clientId"] as! String, $0["rejections"] as! Int) })
            #expect(byClient == ["alice": 2, "bob": 1])
            #expect(try await api.counters(tenant, credential: otherID).first?["totalRejections"] as? Int == 1)

            let counterID = try #require(counter["id"] as? String)
            let one = try await api.call(.get, "/v1/counters/\(counterID)", key: tenant.adminKey)
            #expect(one.int("totalRejections") == 3)
            #expect(try await api.call(.get, "/v1/counters/\(UUID())", key: tenant.adminKey).status == 404)
            #expect(try await api.call(.get, "/v1/counters?credentialId=nope", key: tenant.adminKey).errorCode == "invalid_query")
            // As the message says: true or false, nothing else.
            for value in ["perhaps", "1", "TRUE", "False"] {
                #expect(try await api.call(.get, "/v1/counters?blocked=\(value)", key: tenant.adminKey).errorCode == "invalid_query", "\(value)")
            }
            #expect(try await api.call(.get, "/v1/counters", key: tenant.clientKey).status == 403)
        }
    }

    /// A credential a fleet keeps sending counts a client per device: the counter lists the
    /// clients refused most recently and says how many there are.
    @Test func aCounterListsItsMostRecentClientsAndCountsThemAll() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 1000, "persistence": "none""#)
            let devices = CounterStore.listedClients + 5
            for device in 0..<devices {
                let session = try await api.session(tenant, clientId: "device-\(device)")
                let decision = try #require(try await api.decided(tenant, session: session).string("decisionId"))
                try await api.outcome(tenant, decision: decision, "rejected", upstreamStatus: 401)
            }
            let counter = try #require(try await api.counters(tenant, credential: id).first)
            #expect(counter["clientCount"] as? Int == devices)
            let clients = try #require(counter["clients"] as? [[String: Any]])
            #expect(clients.count == CounterStore.listedClients)
            #expect(clients.first?["clientId"] as? String == "device-\(devices - 1)")
            #expect(!clients.contains { $0["clientId"] as? String == "device-0" })
        }
    }

    @Test func eachProtectionSpaceCountsApart() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 10, "persistence": "none""#)
            let session = try await api.session(tenant)
            for realm in ["A", "B", "B"] {
                let decision = try #require(try await api.decided(tenant, session: session, taskId: UUID().uuidString, space: Space.basic.with { $0.realm = realm }).string("decisionId"))
                try await api.outcome(tenant, decision: decision, "rejected")
            }
            let counters = try await api.counters(tenant)
            #expect(counters.map { $0["failures"] as? Int ?? -1 }.sorted() == [1, 2])
        }
    }

    @Test func countersComeInPagesNewestFirst() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 10, "persistence": "none""#)
            let session = try await api.session(tenant)
            let realms = ["A", "B", "C", "D", "E"]
            for realm in realms {
                let decision = try #require(try await api.decided(tenant, session: session, taskId: UUID().uuidString, space: Space.basic.with { $0.realm = realm }).string("decisionId"))
                try await api.outcome(tenant, decision: decision, "rejected")
            }
            let (counters, pages) = try await api.allPages("/v1/counters", "counters", key: tenant.adminKey, limit: 2)
            let seen = counters.compactMap { ($0["protectionSpace"] as? String)?.split(separator: "|").dropLast().last.map(String.init) }
            #expect(pages == 3)
            #expect(seen == realms.reversed(), "newest first, each counter once")
            #expect(try await api.call(.get, "/v1/counters?cursor=bogus", key: tenant.adminKey).errorCode == "invalid_query")
            #expect(try await api.call(.get, "/v1/counters?limit=0", key: tenant.adminKey).errorCode == "invalid_query")
        }
    }

    /// Counters change while an admin pages through them (the fleet keeps rejecting): a counter
    /// rejected again after the first page must still come, once, on a later one.
    @Test func aCounterRejectedWhilePagingIsListedOnce() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            _ = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 100, "persistence": "none""#)
            let session = try await api.session(tenant)
            func reject(_ realm: String) async throws {
                let decision = try #require(try await api.decided(tenant, session: session, taskId: UUID().uuidString, space: Space.basic.with { $0.realm = realm }).string("decisionId"))
                try await api.outcome(tenant, decision: decision, "rejected")
            }
            for realm in ["A", "B", "C"] { try await reject(realm) }
            let first = try await api.call(.get, "/v1/counters?limit=1", key: tenant.adminKey)
            var seen = try #require(first["counters"] as? [[String: Any]]).compactMap { $0["id"] as? String }
            var cursor = first.string("nextCursor")
            try await reject("A")
            while let next = cursor {
                let page = try await api.call(.get, "/v1/counters?limit=1&cursor=\(next)", key: tenant.adminKey)
                seen += try #require(page["counters"] as? [[String: Any]]).compactMap { $0["id"] as? String }
                cursor = page.string("nextCursor")
            }
            #expect(seen.count == 3 && Set(seen).count == 3, "every counter once: \(seen)")
        }
    }

    @Test func resetLiftsTheBlockAndKeepsTheTotal() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 2, "persistence": "none""#)
            let session = try await api.session(tenant)
            for task in ["a", "b"] {
                let decision = try #require(try await api.decided(tenant, session: session, taskId: task).string("decisionId"))
                try await api.outcome(tenant, decision: decision, "rejected")
            }
            #expect(try await api.decided(tenant, session: session)["credential"] is NSNull)
            let blocked = try await api.call(.get, "/v1/counters?blocked=true", key: tenant.adminKey)
            let counter = try #require((blocked["counters"] as? [[String: Any]])?.first)
            #expect(counter["blockedUntil"] as? String != nil)
            #expect(counter["blocks"] as? Int == 1)

            let counterID = try #require(counter["id"] as? String)
            let reset = try await api.call(.post, "/v1/counters/\(counterID)/reset", key: tenant.adminKey)
            #expect(reset.status == 200)
            #expect(reset.int("failures") == 0)
            #expect(reset["blockedUntil"] is NSNull)
            #expect(reset.int("totalRejections") == 2)
            #expect(reset.int("blocks") == 1)
            let noneBlocked = try await api.call(.get, "/v1/counters?blocked=true", key: tenant.adminKey)
            #expect((noneBlocked["counters"] as? [Any])?.isEmpty == true)

            let released = try await api.decided(tenant, session: session)
            #expect(released.credentialPassword == "s3cret")
            #expect(released.int("remainingAttempts") == 2)
            let events = try await api.history(tenant, credential: id).compactMap { $0["event"] as? String }
            #expect(events == ["created", "blocked", "counter_reset"])
            #expect(try await api.call(.post, "/v1/counters/\(UUID())/reset", key: tenant.adminKey).status == 404)
        }
    }

    /// A rejection counts against the limit in force when it is counted: answers given before an
    /// admin lowered `maxFailures` block at the new limit, and after a raise no longer block at
    /// the old one.
    @Test func aChangedLimitHoldsForAnswersAlreadyGiven() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let id = try await api.credential(tenant)
            try await api.releasePolicy(tenant, then: #""maxFailures": 10, "persistence": "none", "blockSeconds": 600"#)
            let session = try await api.session(tenant)
            var decisions: [String] = []
            for index in 0..<6 {
                decisions.append(try #require(try await api.decided(tenant, session: session, taskId: "t\(index)").string("decisionId")))
            }
            try await api.releasePolicy(tenant, then: #""maxFailures": 2, "persistence": "none", "blockSeconds": 600"#)
            let first = try await api.outcome(tenant, decision: decisions[0], "rejected", upstreamStatus: 401)
            #expect((first.json["counter"] as? [String: Any])?["remainingAttempts"] as? Int == 1, "\(first)")
            let second = try await api.outcome(tenant, decision: decisions[1], "rejected", upstreamStatus: 401)
            #expect((second.json["counter"] as? [String: Any])?["blockedUntil"] is String, "\(second)")
            let blocked = try await api.decided(tenant, session: try await api.session(tenant, clientId: "bob"))
            #expect(blocked.string("disposition") == "cancelAuthenticationChallenge", "\(blocked)")

            // Raised again (the block reset by an admin): the four answers left count to 4 of 10.
            try await api.releasePolicy(tenant, then: #""maxFailures": 10, "persistence": "none", "blockSeconds": 600"#)
            let counterID = try #require(try await api.counters(tenant, credential: id).first?["id"] as? String)
            #expect(try await api.call(.post, "/v1/counters/\(counterID)/reset", key: tenant.adminKey).status == 200)
            for decision in decisions[2...] {
                let rejected = try await api.outcome(tenant, decision: decision, "rejected", upstreamStatus: 401)
                #expect((rejected.json["counter"] as? [String: Any])?["blockedUntil"] is NSNull, "\(rejected)")
            }
            let counter = try #require(try await api.counters(tenant, credential: id).first)
            #expect(counter["failures"] as? Int == 4)
            #expect(counter["blockedUntil"] is NSNull)
            let released = try await api.decided(tenant, session: try await api.session(tenant, clientId: "carol"))
            #expect(released.string("disposition") == "useCredential")
            #expect(released.int("remainingAttempts") == 6)
        }
    }

    /// A credential the client submitted is remembered without a limit of its own: served from
    /// the session, it carries the rule's, and blocks at it.
    @Test func aSubmittedCredentialBlocksAtTheRulesLimit() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            try await api.releasePolicy(tenant, then: #""maxFailures": 1, "persistence": "forSession", "blockSeconds": 600"#)
            let session = try await api.session(tenant)
            _ = try await api.submit(tenant, session: session, user: "typed", password: "pw-typed", persistence: "forSession")
            let served = try await api.decided(tenant, session: session)
            #expect(served.string("source") == "session", "\(served)")
            #expect(served.int("remainingAttempts") == 1, "\(served)")
            let rejected = try await api.outcome(tenant, decision: try #require(served.string("decisionId")), "rejected", upstreamStatus: 401)
            #expect((rejected.json["counter"] as? [String: Any])?["blockedUntil"] is String, "\(rejected)")
            let again = try await api.decided(tenant, session: session, taskId: "task-2")
            #expect(again.string("disposition") == "cancelAuthenticationChallenge", "\(again)")
            #expect(!again.text.contains("pw-typed"))
        }
    }

    /// The rule that matches the space now counts a rejection only when it would release the same
    /// credential: a rule now naming another one leaves the limit the answer was given with, for
    /// counting and for what the session remembered.
    @Test func anotherCredentialsRuleDoesNotSetTheLimit() async throws {
        try await TestService.run { api in
            let tenant = try await api.tenant()
            let first = try await api.credential(tenant)
            let second = try await api.credential(tenant, account: "other")
            func rule(_ credential: String, maxFailures: Int, persistence: String) -> String {
                #"[{"id": "intranet", "match": {"host": "*.example.com"}, "then": {"disposition": "useCredential", "credentialId": "\#(credential)", "maxFailures": \#(maxFailures), "persistence": "\#(persistence)", "blockSeconds": 600}}]"#
            }
            try await api.policy(tenant, rules: rule(first, maxFailures: 5, persistence: "forSession"))
            let session = try await api.session(tenant)
            let released = try await api.decided(tenant, session: session)
            #expect(released.int("remainingAttempts") == 5)

            try await api.policy(tenant, rules: rule(second, maxFailures: 1, persistence: "none"))
            let remembered = try await api.decided(tenant, session: session, taskId: "task-2")
            #expect(remembered.string("source") == "session", "\(remembered)")
            #expect(remembered.int("remainingAttempts") == 5, "\(remembered)")
            let rejected = try await api.outcome(tenant, decision: try #require(released.string("decisionId")), "rejected", upstreamStatus: 401)
            let counter = try #require(rejected.json["counter"] as? [String: Any], "\(rejected)")
            #expect(counter["blockedUntil"] is NSNull, "\(rejected)")
            #expect(counter["remainingAttempts"] as? Int == 4)
        }
    }
}
