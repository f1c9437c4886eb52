import CountersignTestSupport
import Foundation
import HummingbirdTesting
import Testing

/// Two real `countersign serve` processes on one database, many concurrent clients: rejection
/// counting is exact and a block holds on every instance.
@Suite("Counting across instances")
struct MultiInstanceCountingTests {
    static let workers = 40
    static let decisionsPerWorker = 5
    static let maxFailures = 50

    @Test func rejectionsAreCountedExactlyAndBlockEverywhere() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: ServiceProcess.executable), "run `swift build --build-tests` first")
        let databaseURL = try await TestDatabase.freshDatabase()
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let first = try await ServiceProcess.ready(databaseURL: databaseURL, keys: keys)
        defer { first.stop() }
        let second = try await ServiceProcess.ready(databaseURL: databaseURL, keys: keys)
        defer { second.stop() }
        let instances = [first, second]

        // Set up through the first instance.
        let setupClient = first.client()
        defer { Task { try? await setupClient.shutdown() } }
        let setup = TestAPI(setupClient)
        let tenant = try await setup.tenant()
        let credentialID = try await setup.credential(tenant, password: "fleet-secret-1")
        try await setup.releasePolicy(tenant, then: #""maxFailures": \#(Self.maxFailures), "persistence": "none", "blockSeconds": 3600"#)

        // 1. Every worker gets its decisions, alternating instances; all are released.
        let released = try await Self.perWorker(instances) { worker, apis in
            var decisions: [String] = []
            let session = try await apis[worker % 2].session(tenant, clientId: "client-\(worker)")
            for index in 0..<Self.decisionsPerWorker {
                let reply = try await apis[index % 2].decided(tenant, session: session, taskId: "task-\(index)")
                try #require(reply.credentialPassword == "fleet-secret-1", "\(reply)")
                decisions.append(try #require(reply.string("decisionId")))
            }
            return decisions
        }
        #expect(released.count == Self.workers * Self.decisionsPerWorker)

        // 2. Every worker reports its decisions rejected, concurrently, split across instances.
        let byWorker = Dictionary(grouping: released.enumerated(), by: { $0.offset / Self.decisionsPerWorker }).mapValues { $0.map(\.element) }
        let counted = try await Self.perWorker(instances) { worker, apis in
            var counted: [Bool] = []
            for (index, decision) in byWorker[worker, default: []].enumerated() {
                let reply = try await apis[(worker + index) % 2].outcome(tenant, decision: decision, "rejected", upstreamStatus: 401)
                try #require(reply.status == 200, "\(reply)")
                counted.append(reply["counted"] as? Bool == true)
            }
            return counted
        }
        #expect(counted.count == released.count)
        #expect(counted.allSatisfy { $0 })

        let counters = try await setup.counters(tenant)
        try #require(counters.count == 1)
        let counter = counters[0]
        #expect(counter["totalRejections"] as? Int == released.count)
        #expect(counter["failures"] as? Int == released.count)
        #expect(counter["blocks"] as? Int == 1)
        #expect(counter["blockedUntil"] as? String != nil)
        let clients = try #require(counter["clients"] as? [[String: Any]])
        #expect(clients.count == Self.workers)
        #expect(clients.compactMap { $0["rejections"] as? Int }.reduce(0, +) == released.count)
        let blocks = try await setup.history(tenant, credential: credentialID).filter { $0["event"] as? String == "blocked" }
        #expect(blocks.count == 1)
        #expect((blocks.first?["details"] as? [String: String])?["failures"] == String(Self.maxFailures))

        // 3. No instance releases it, to new sessions or old ones.
        try await Self.expectEveryInstanceAnswers(instances, tenant: tenant, password: nil)

        // 4. An admin reset (through the second instance) frees it everywhere.
        let counterID = try #require(counter["id"] as? String)
        try await Self.withAPI(second) { api in
            let reset = try await api.call(.post, "/v1/counters/\(counterID)/reset", key: tenant.adminKey)
            #expect(reset.status == 200)
        }
        try await Self.expectEveryInstanceAnswers(instances, tenant: tenant, password: "fleet-secret-1")

        // 5. An accepted outcome resets the count: 49 rejections, an acceptance, 49 more: no block.
        for round in 0..<2 {
            let decisions = try await Self.releases(Self.maxFailures, instances: instances, tenant: tenant, clientPrefix: "round\(round)")
            try await Self.report(Array(decisions.dropLast()), "rejected", instances: instances, tenant: tenant)
            let counted = try #require(try await setup.counters(tenant).first)
            #expect(counted["failures"] as? Int == Self.maxFailures - 1)
            #expect(counted["blockedUntil"] is NSNull)
            try await Self.report([decisions.last!], "accepted", instances: instances, tenant: tenant)
            #expect(try await setup.counters(tenant).first?["failures"] as? Int == 0)
        }
        let beforeLast = try await Self.releases(Self.maxFailures, instances: instances, tenant: tenant, clientPrefix: "before-last")
        try await Self.report(Array(beforeLast.dropLast()), "rejected", instances: instances, tenant: tenant)
        #expect(try await setup.counters(tenant).first?["blockedUntil"] is NSNull)
        // One more: the block comes at exactly maxFailures, a second one.
        try await Self.report([beforeLast.last!], "rejected", instances: instances, tenant: tenant)
        let again = try #require(try await setup.counters(tenant).first)
        #expect(again["blocks"] as? Int == 2)
        #expect(again["totalRejections"] as? Int == released.count + 3 * (Self.maxFailures - 1) + 1)
        try await Self.expectEveryInstanceAnswers(instances, tenant: tenant, password: nil)

        // 6. A new secret (through the second instance) unblocks it everywhere.
        try await Self.withAPI(second) { api in
            let patched = try await api.call(.patch, "/v1/credentials/\(credentialID)", key: tenant.adminKey, json: ["password": "fleet-secret-2"])
            #expect(patched.status == 200)
        }
        try await Self.expectEveryInstanceAnswers(instances, tenant: tenant, password: "fleet-secret-2")

        // 7. A session the second instance has cached, invalidated through the first: refused there.
        let shared = try await setup.session(tenant, clientId: "shared")
        try await Self.withAPI(second) { api in
            let released = try await api.decided(tenant, session: shared)
            #expect(released.credentialPassword == "fleet-secret-2")
        }
        #expect(try await setup.invalidate(tenant, session: shared, mode: "finishTasks").status == 200)
        try await Self.withAPI(second) { api in
            let refused = try await api.decide(tenant, session: shared, ChallengeBody(taskId: "after"))
            #expect(refused.status == 409)
            #expect(refused.errorCode == "session_invalidated")
        }
        #expect(first.isRunning && second.isRunning)
    }

    /// Runs `body` for every worker at once; each worker has its own connection to each instance.
    static func perWorker<T: Sendable>(
        _ instances: [ServiceProcess],
        _ body: @escaping @Sendable (Int, [TestAPI]) async throws -> [T]
    ) async throws -> [T] {
        try await withThrowingTaskGroup(of: [T].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    let clients = instances.map { $0.client() }
                    do {
                        let result = try await body(worker, clients.map(TestAPI.init))
                        for client in clients { try? await client.shutdown() }
                        return result
                    } catch {
                        for client in clients { try? await client.shutdown() }
                        throw error
                    }
                }
            }
            return try await group.reduce(into: [T]()) { $0 += $1 }
        }
    }

    static func withAPI(_ instance: ServiceProcess, _ body: @Sendable (TestAPI) async throws -> Void) async throws {
        let client = instance.client()
        do {
            try await body(TestAPI(client))
        } catch {
            try? await client.shutdown()
            throw error
        }
        try? await client.shutdown()
    }

    /// `count` released decisions, from new sessions spread over the instances.
    static func releases(_ count: Int, instances: [ServiceProcess], tenant: TestAPI.Tenant, clientPrefix: String) async throws -> [String] {
        let perWorker = (count + workers - 1) / workers
        let all = try await self.perWorker(instances) { worker, apis in
            let mine = max(0, min(perWorker, count - worker * perWorker))
            guard mine > 0 else { return [String]() }
            let session = try await apis[worker % 2].session(tenant, clientId: "\(clientPrefix)-\(worker)")
            var ids: [String] = []
            for index in 0..<mine {
                let reply = try await apis[index % 2].decided(tenant, session: session, taskId: "t\(index)")
                try #require(reply.string("disposition") == "useCredential", "\(reply)")
                ids.append(try #require(reply.string("decisionId")))
            }
            return ids
        }
        #expect(all.count == count)
        return all
    }

    static func report(_ decisions: [String], _ outcome: String, instances: [ServiceProcess], tenant: TestAPI.Tenant) async throws {
        let shares = Dictionary(grouping: decisions.enumerated(), by: { $0.offset % workers }).mapValues { $0.map(\.element) }
        _ = try await perWorker(instances) { worker, apis in
            for (index, decision) in shares[worker, default: []].enumerated() {
                let reply = try await apis[(worker + index) % 2].outcome(tenant, decision: decision, outcome)
                try #require(reply.status == 200 && reply["counted"] as? Bool == (outcome == "rejected"), "\(reply)")
            }
            return [Bool]()
        }
    }

    /// Every instance, for a new session and an existing one, releases `password` (or, with
    /// `nil`, answers the blocked disposition and releases nothing).
    static func expectEveryInstanceAnswers(_ instances: [ServiceProcess], tenant: TestAPI.Tenant, password: String?) async throws {
        for instance in instances {
            try await withAPI(instance) { api in
                let session = try await api.session(tenant, clientId: "checker")
                for task in 0..<5 {
                    let reply = try await api.decided(tenant, session: session, taskId: "check-\(task)")
                    if let password {
                        #expect(reply.credentialPassword == password, "port \(instance.port): \(reply)")
                    } else {
                        #expect(reply.string("disposition") == "cancelAuthenticationChallenge", "port \(instance.port): \(reply)")
                        #expect(reply["credential"] is NSNull)
                        #expect(reply.int("remainingAttempts") == 0)
                        #expect(reply.string("blockedUntil") != nil)
                    }
                }
            }
        }
    }
}
