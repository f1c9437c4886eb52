@testable import CountersignClient
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plain URLSession with CountersignSessionDelegate, a real upstream server that demands Basic
/// authentication, and a real Countersign: what a fleet app does.
@Suite("End to end: URLSession, the delegate, Countersign and a Basic server", .urlSessionSlot)
struct EndToEndTests {
    static let account = "svc-fleet"

    /// A tenant whose policy releases `account`'s credential for the Basic server, at most
    /// `maxFailures` rejections.
    static func prepare(
        _ service: LiveCountersign,
        server: BasicAuthServer,
        password: String,
        maxFailures: Int = 3,
        persistence: String = "forSession"
    ) async throws -> AdminAPI.Tenant {
        let tenant = try await service.admin.tenant()
        _ = try await service.admin.credential(
            tenant,
            json: """
                {"host": "127.0.0.1", "port": \(server.port), "protocol": "http", "realm": "\(BasicAuthServer.realm)",
                 "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic", "account": "\(account)", "password": "\(password)"}
                """
        )
        try await service.admin.policy(
            tenant,
            rules: """
                [{"id": "fleet-basic", "name": "Fleet Basic",
                  "match": {"host": "127.0.0.1", "port": \(server.port), "methods": ["NSURLAuthenticationMethodHTTPBasic"]},
                  "then": {"disposition": "useCredential", "account": "\(account)", "persistence": "\(persistence)", "maxFailures": \(maxFailures)}}]
                """
        )
        return tenant
    }

    static func delegate(_ service: LiveCountersign, _ tenant: AdminAPI.Tenant, events: EventLog, clientId: String = "device-1") -> CountersignSessionDelegate {
        let client = CountersignClient(baseURL: service.baseURL, key: ClientKey(tenant.clientKey))
        return CountersignSessionDelegate(client: client, configuration: .init(clientId: clientId, sessionLabel: "e2e", onEvent: events.handler))
    }

    @Test("the right stored password: 200, one decision, reported accepted")
    func acceptedCredential() async throws {
        try await LiveCountersign.run { service in
            try await BasicAuthServer.run(user: Self.account, password: "right-password") { server in
                let tenant = try await Self.prepare(service, server: server, password: "right-password")
                let events = EventLog()
                let delegate = Self.delegate(service, tenant, events: events)
                let session = makeSession(delegate)

                let summary = try await events.run(session, server.url)
                #expect(summary.status == 200)
                #expect(summary.error == nil)
                let decision = try #require(summary.decisions.only)
                #expect(decision.disposition == .useCredential)
                #expect(decision.user == Self.account)
                #expect(decision.rule?.id == "fleet-basic")
                #expect(decision.protectionSpace.realm == BasicAuthServer.realm)
                #expect(decision.protectionSpace.authenticationMethod == .httpBasic)
                #expect(summary.outcomes.map(\.report) == [OutcomeReport(outcome: .accepted, upstreamStatus: 200)])
                // One unauthenticated request, then the released credential.
                #expect(server.log.authorizations.count == 2)
                #expect(server.log.authorizations.first == .some(nil))

                delegate.finishTasksAndInvalidate(session)
                await delegate.waitUntilIdle()
                #expect(events.reported.map(\.0) == [decision.decisionId])
                #expect(events.sessionsOpened.count == 1)
                let countersignSession = try #require(events.sessionsOpened.first)
                let recorded = try await service.admin.decisions(tenant, sessionId: countersignSession.id)
                #expect(recorded.count == 1)
                #expect(recorded.first?["outcome"] as? String == "accepted")
                #expect(recorded.first?["outcomeStatus"] as? Int == 200)
                // Never a secret in the admin's view, and the session ended with the URLSession.
                #expect(!String(describing: recorded).contains("right-password"))
                let invalidated = try #require(events.invalidated.first)
                #expect(invalidated.id == countersignSession.id)
                #expect(invalidated.invalidationMode == .finishTasks)
                #expect(try await service.admin.counters(tenant).allSatisfy { $0["failures"] as? Int == 0 })
            }
        }
    }

    /// FoundationNetworking never calls `didCompleteWithError` for a task behind `data(from:)`:
    /// unreported, an accepted credential would keep the rejections its retries counted.
    @Test("a task behind data(from:): its outcome is reported all the same, once")
    func asyncTaskReported() async throws {
        try await LiveCountersign.run { service in
            try await BasicAuthServer.run(user: Self.account, password: "right-password") { server in
                let tenant = try await Self.prepare(service, server: server, password: "right-password")
                let events = EventLog()
                let delegate = Self.delegate(service, tenant, events: events)
                let session = makeSession(delegate)
                let (_, response) = try await session.data(from: server.url)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                let decision = try #require(events.decisions.only)
                try await events.wait(timeout: .seconds(10)) { !$0.reported.isEmpty }
                #expect(events.reported.map(\.0) == [decision.decisionId])
                #expect(events.reported.first?.1 == OutcomeReport(outcome: .accepted, upstreamStatus: 200))

                delegate.finishTasksAndInvalidate(session)
                await delegate.waitUntilIdle()
                #expect(events.completedTasks.count == 1)
                #expect(events.reported.count == 1)
                let countersignSession = try #require(events.sessionsOpened.first)
                let recorded = try await service.admin.decisions(tenant, sessionId: countersignSession.id)
                #expect(recorded.first?["outcome"] as? String == "accepted")
            }
        }
    }

    @Test("a wrong stored password: 401 after maxFailures attempts, exactly that many rejections counted", arguments: [1, 3])
    func rejectedCredential(maxFailures: Int) async throws {
        try await LiveCountersign.run { service in
            try await BasicAuthServer.run(user: Self.account, password: "right-password") { server in
                let tenant = try await Self.prepare(service, server: server, password: "stale-password", maxFailures: maxFailures)
                let events = EventLog()
                let delegate = Self.delegate(service, tenant, events: events)
                let session = makeSession(delegate)

                let summary = try await events.run(session, server.url)
                #expect(summary.status == 401)
                // The credential was sent maxFailures times, after the first unauthenticated request.
                let stale = "Basic " + Data("\(Self.account):stale-password".utf8).base64EncodedString()
                #expect(server.log.authorizations == [nil] + Array(repeating: stale, count: maxFailures))
                #expect(summary.decisions.count == maxFailures + 1)
                #expect(summary.decisions.prefix(maxFailures).allSatisfy { $0.disposition == .useCredential })
                let blocked = try #require(summary.decisions.last)
                #expect(blocked.disposition == .cancelAuthenticationChallenge)
                #expect(blocked.remainingAttempts == 0)
                #expect(blocked.blockedUntil != nil)
                // Each retry named the credential it followed, so the service counted every rejection itself.
                #expect(summary.decisions.dropFirst().map(\.countedRejection) == summary.decisions.dropLast().map(\.decisionId))

                await delegate.waitUntilIdle()
                let counters = try await service.admin.counters(tenant)
                let counter = try #require(counters.only)
                #expect(counter["failures"] as? Int == maxFailures)
                #expect(counter["totalRejections"] as? Int == maxFailures)
                #expect(counter["blockedUntil"] is String)
                let clients = counter["clients"] as? [[String: Any]]
                #expect(clients?.first?["clientId"] as? String == "device-1")
                #expect(clients?.first?["rejections"] as? Int == maxFailures)

                // Another task of the same session meets the block at once; nothing more is counted.
                let second = try await events.run(session, server.url)
                #expect(second.status == 401)
                #expect(second.decisions.map(\.disposition) == [.cancelAuthenticationChallenge])
                await delegate.waitUntilIdle()
                #expect(try await service.admin.counters(tenant).only?["totalRejections"] as? Int == maxFailures)

                delegate.invalidateAndCancel(session)
                await delegate.waitUntilIdle()
                #expect(events.invalidated.first?.invalidationMode == .cancel)
                let countersignSession = try #require(events.sessionsOpened.only)
                let recorded = try await service.admin.decisions(tenant, sessionId: countersignSession.id)
                let released = recorded.filter { $0["disposition"] as? String == "useCredential" }
                #expect(released.count == maxFailures)
                #expect(released.allSatisfy { $0["outcome"] as? String == "rejected" && $0["outcomeStatus"] as? Int == 401 })
            }
        }
    }

    @Test("many tasks at once: one Countersign session, every task answered", arguments: ["none", "forSession"])
    func concurrentTasks(persistence: String) async throws {
        try await LiveCountersign.run { service in
            try await BasicAuthServer.run(user: Self.account, password: "right-password") { server in
                let tenant = try await Self.prepare(service, server: server, password: "right-password", persistence: persistence)
                let events = EventLog()
                let delegate = Self.delegate(service, tenant, events: events)
                let session = makeSession(delegate)

                let tasks = (0..<8).map { _ in session.dataTask(with: server.url) }
                tasks.forEach { $0.resume() }
                for task in tasks {
                    let summary = try await events.completion(of: task.taskIdentifier)
                    #expect(summary.status == 200)
                }
                #expect(events.fallbacks.isEmpty, "\(events.fallbacks)")
                delegate.finishTasksAndInvalidate(session)
                await delegate.waitUntilIdle()
                let opened = try #require(events.sessionsOpened.only)
                let recorded = try await service.admin.decisions(tenant, sessionId: opened.id)
                #expect(recorded.count == 8)
                #expect(Set(recorded.compactMap { $0["taskId"] as? String }) == Set(tasks.map { String($0.taskIdentifier) }))
                #expect(recorded.allSatisfy { $0["outcome"] as? String == "accepted" })
            }
        }
    }

    @Test("an unprotected URL: no challenge, no session, nothing reported")
    func noChallenge() async throws {
        try await LiveCountersign.run { service in
            try await BasicAuthServer.run(user: Self.account, password: "right-password") { server in
                let tenant = try await service.admin.tenant()
                let events = EventLog()
                let delegate = Self.delegate(service, tenant, events: events)
                let session = makeSession(delegate)
                let summary = try await events.run(session, URL(string: "http://127.0.0.1:\(server.port)/open")!)
                #expect(summary.status == 200)
                #expect(summary.decisions.isEmpty)
                session.finishTasksAndInvalidate()
                await delegate.waitUntilIdle()
                #expect(events.sessionsOpened.isEmpty)
                #expect(events.invalidated.isEmpty)
            }
        }
    }

    @Test("no matching rule: the service says performDefaultHandling, the task ends with the 401")
    func noMatchingRule() async throws {
        try await LiveCountersign.run { service in
            try await BasicAuthServer.run(user: Self.account, password: "right-password") { server in
                let tenant = try await service.admin.tenant()
                let events = EventLog()
                let delegate = Self.delegate(service, tenant, events: events)
                let session = makeSession(delegate)
                let summary = try await events.run(session, server.url)
                #expect(summary.status == 401)
                let decision = try #require(summary.decisions.only)
                #expect(decision.disposition == .performDefaultHandling)
                #expect(decision.source == .noMatchingRule)
                #expect(decision.appliedDisposition == defaultHandlingWithoutCredential.contractDisposition)
                #expect(summary.outcomes.isEmpty)
                // The URLSession ended without the delegate's helper: finishTasks.
                session.finishTasksAndInvalidate()
                try await events.wait { !$0.invalidated.isEmpty }
                #expect(events.invalidated.only?.invalidationMode == .finishTasks)
            }
        }
    }
}

extension Collection {
    /// The one element, or nil when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
