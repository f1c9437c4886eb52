@testable import CountersignClient
import Foundation
import Testing

/// The bookkeeping behind outcome reports, without any I/O.
@Suite("Task ledger")
struct TaskLedgerTests {
    static let origin = ProtectionSpace(host: "api.example.com", port: 443, protocolName: "https", realm: "API", authenticationMethod: .httpBasic)
    static let proxy = ProtectionSpace(host: "proxy.example.com", port: 3128, protocolName: "http", realm: "Proxy", authenticationMethod: .httpBasic, isProxy: true)

    static func decision(_ space: ProtectionSpace, user: String? = "svc", task: Int = 1) -> (DecisionSummary, TaskLedger.Use?) {
        let answer = DecisionAnswer(
            decisionId: UUID(),
            disposition: user == nil ? .performDefaultHandling : .useCredential,
            credential: user.map { .password(user: $0, password: "x") },
            source: .policy,
            reason: "r"
        )
        let summary = DecisionSummary(answer, taskIdentifier: task, space: space, applied: answer.disposition)
        let use = user.map {
            TaskLedger.Use(
                decisionId: answer.decisionId, user: $0, spaceKey: space.ledgerKey, isProxy: space.isProxy, host: space.host, port: space.port,
                realm: space.realm, method: space.authenticationMethod
            )
        }
        return (summary, use)
    }

    @Test("a retry rejects the credential the task was given there, once")
    func retry() {
        var ledger = TaskLedger()
        let (summary, use) = Self.decision(Self.origin)
        let recorded = ledger.record(summary, use: use, task: 1)
        #expect(recorded)
        let notARetry = ledger.retry(task: 1, spaceKey: Self.origin.ledgerKey, previousFailureCount: 0, status: 401)
        #expect(notARetry == nil)
        let rejected = ledger.retry(task: 1, spaceKey: Self.origin.ledgerKey, previousFailureCount: 1, status: 401)
        #expect(rejected?.decisionId == summary.decisionId)
        #expect(rejected?.user == "svc")
        // Another task, another space: nothing.
        let otherTask = ledger.retry(task: 2, spaceKey: Self.origin.ledgerKey, previousFailureCount: 1, status: 401)
        let otherSpace = ledger.retry(task: 1, spaceKey: Self.proxy.ledgerKey, previousFailureCount: 1, status: 407)
        #expect(otherTask == nil && otherSpace == nil)
        let completion = ledger.complete(task: 1, status: 401, host: "api.example.com", port: 443)
        #expect(completion.reports == [PendingOutcome(decisionId: summary.decisionId, report: OutcomeReport(outcome: .rejected, upstreamStatus: 401))])
    }

    /// A 400 (a request refused before its credential is looked at, such as a Digest `uri` that
    /// differs from the request line) or a 5xx says nothing of the credential: reported
    /// `accepted`, it reset the fleet's count of a credential that may be wrong. So does a proxy's
    /// 407 ending a task whose origin credential was sent: the request never reached the origin.
    @Test("a 400 or a 5xx from the origin, or a proxy's 407, judges nothing; other answers accept", arguments: [
        (200, Outcome.accepted), (302, .accepted), (404, .accepted), (400, .cancelled), (407, .cancelled), (500, .cancelled), (503, .cancelled),
    ])
    func statusesThatJudgeNothing(status: Int, outcome: Outcome) {
        var ledger = TaskLedger()
        let (summary, use) = Self.decision(Self.origin)
        _ = ledger.record(summary, use: use, task: 1)
        let completion = ledger.complete(task: 1, status: status, host: "api.example.com", port: 443)
        #expect(completion.reports == [PendingOutcome(decisionId: summary.decisionId, report: OutcomeReport(outcome: outcome, upstreamStatus: status))])
    }

    /// A page of realm A redirecting to one of realm B: the task ends with realm B's 401, which
    /// says nothing of realm A's credential, taken before the redirect.
    @Test("another realm of the same server challenging next: the credential passed, accepted")
    func passedToAnotherRealm() {
        var ledger = TaskLedger()
        let (first, firstUse) = Self.decision(Self.origin)
        _ = ledger.record(first, use: firstUse, task: 1)
        let realmB = ProtectionSpace(host: "API.example.com", port: 443, protocolName: "https", realm: "Reports", authenticationMethod: .httpBasic)
        ledger.challenged(task: 1, space: realmB)
        let (second, secondUse) = Self.decision(realmB)
        _ = ledger.record(second, use: secondUse, task: 1)
        // Realm B again with another method, and another server's realm: neither passes realm B's credential.
        ledger.challenged(task: 1, space: ProtectionSpace(host: "api.example.com", port: 443, protocolName: "https", realm: "Reports", authenticationMethod: .httpDigest))
        ledger.challenged(task: 1, space: ProtectionSpace(host: "other.example.com", port: 443, protocolName: "https", realm: "Other", authenticationMethod: .httpBasic))
        let completion = ledger.complete(task: 1, status: 401, host: "api.example.com", port: 443)
        #expect(
            completion.reports == [
                PendingOutcome(decisionId: first.decisionId, report: OutcomeReport(outcome: .accepted)),
                PendingOutcome(decisionId: second.decisionId, report: OutcomeReport(outcome: .rejected, upstreamStatus: 401)),
            ]
        )
    }

    @Test("a retry after an answer without a credential names nobody")
    func retryAfterNoCredential() {
        var ledger = TaskLedger()
        let (first, use) = Self.decision(Self.origin)
        _ = ledger.record(first, use: use, task: 1)
        _ = ledger.retry(task: 1, spaceKey: Self.origin.ledgerKey, previousFailureCount: 1, status: 401)
        let (second, none) = Self.decision(Self.origin, user: nil)
        _ = ledger.record(second, use: none, task: 1)
        let retried = ledger.retry(task: 1, spaceKey: Self.origin.ledgerKey, previousFailureCount: 2, status: 401)
        #expect(retried == nil)
    }

    @Test("rejections the service counted from the retry are not reported again")
    func countedByService() {
        var ledger = TaskLedger()
        let (first, firstUse) = Self.decision(Self.origin)
        _ = ledger.record(first, use: firstUse, task: 1)
        _ = ledger.retry(task: 1, spaceKey: Self.origin.ledgerKey, previousFailureCount: 1, status: 401)
        ledger.serviceCounted(first.decisionId)
        let (second, secondUse) = Self.decision(Self.origin)
        _ = ledger.record(second, use: secondUse, task: 1)
        let completion = ledger.complete(task: 1, status: 200, host: "api.example.com", port: 443)
        #expect(completion.reports == [PendingOutcome(decisionId: second.decisionId, report: OutcomeReport(outcome: .accepted, upstreamStatus: 200))])
        #expect(completion.decisions.map(\.decisionId) == [first.decisionId, second.decisionId])
    }

    @Test("a proxy credential is judged by 407, the origin's by 401 from that origin")
    func proxyAndOrigin() {
        var ledger = TaskLedger()
        let (viaProxy, proxyUse) = Self.decision(Self.proxy)
        let (atOrigin, originUse) = Self.decision(Self.origin)
        _ = ledger.record(viaProxy, use: proxyUse, task: 1)
        _ = ledger.record(atOrigin, use: originUse, task: 1)
        let completion = ledger.complete(task: 1, status: 401, host: "API.example.com", port: 443)
        #expect(
            completion.reports == [
                PendingOutcome(decisionId: viaProxy.decisionId, report: OutcomeReport(outcome: .accepted, upstreamStatus: 401)),
                PendingOutcome(decisionId: atOrigin.decisionId, report: OutcomeReport(outcome: .rejected, upstreamStatus: 401)),
            ]
        )
    }

    @Test("a task that failed with the 401 that asked for the credential: cancelled, the credential was never judged")
    func failedWhileSendingTheCredential() {
        var ledger = TaskLedger()
        let (refused, refusedUse) = Self.decision(Self.origin)
        _ = ledger.record(refused, use: refusedUse, task: 1)
        _ = ledger.retry(task: 1, spaceKey: Self.origin.ledgerKey, previousFailureCount: 1, status: 401)
        let (unanswered, unansweredUse) = Self.decision(Self.origin)
        _ = ledger.record(unanswered, use: unansweredUse, task: 1)
        let completion = ledger.complete(task: 1, status: 401, host: "api.example.com", port: 443, endedWithError: true)
        #expect(
            completion.reports == [
                PendingOutcome(decisionId: refused.decisionId, report: OutcomeReport(outcome: .rejected, upstreamStatus: 401)),
                PendingOutcome(decisionId: unanswered.decisionId, report: OutcomeReport(outcome: .cancelled)),
            ]
        )
    }

    @Test("an ended task records nothing more, and forgets its entry")
    func endedTask() {
        var ledger = TaskLedger()
        let (first, use) = Self.decision(Self.origin)
        _ = ledger.record(first, use: use, task: 7)
        _ = ledger.complete(task: 7, status: nil, host: nil, port: nil)
        #expect(ledger.openTasks.isEmpty)
        let (late, lateUse) = Self.decision(Self.origin, task: 7)
        let lateRecorded = ledger.record(late, use: lateUse, task: 7)
        #expect(!lateRecorded)
        #expect(ledger.openTasks.isEmpty)
        let again = ledger.complete(task: 7, status: 200, host: nil, port: nil)
        #expect(again.reports.isEmpty)
    }

    @Test("ended tasks are remembered within a bound")
    func boundedMemory() {
        var ledger = TaskLedger()
        for task in 0..<(TaskLedger.completedMemory + 10) { _ = ledger.complete(task: task, status: 200, host: nil, port: nil) }
        let (summary, use) = Self.decision(Self.origin, task: 0)
        let forgotten = ledger.record(summary, use: use, task: 0)
        #expect(forgotten)
        let (recent, recentUse) = Self.decision(Self.origin, task: TaskLedger.completedMemory + 5)
        let remembered = ledger.record(recent, use: recentUse, task: TaskLedger.completedMemory + 5)
        #expect(!remembered)
    }
}
