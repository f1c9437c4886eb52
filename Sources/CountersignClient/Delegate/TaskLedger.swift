import Foundation

/// What the delegate remembers about each task's challenges, to report outcomes when the task
/// ends: which decision's credential the task was given for which protection space, and which
/// of those the upstream server already refused. Pure bookkeeping, no I/O; the delegate keeps it
/// under a lock.
struct TaskLedger: Sendable {
    /// A credential a decision gave a task.
    struct Use: Sendable, Hashable {
        var decisionId: UUID
        var user: String
        var spaceKey: String
        var isProxy: Bool
        var host: String
        /// The space's port, Apple's 0 read as the protocol's default (``ProtectionSpace/effectivePort``).
        var port: Int
        var realm: String?
        var method: AuthenticationMethod
        /// The status that refused it, known when the same space challenged the task again.
        var rejectedWith: Int?
        /// The service counted that rejection itself (the retry's `countedRejection`).
        var countedByService = false
        /// Another realm of the same server, with the same method, challenged the task afterwards:
        /// the server took this credential and moved on (a page of realm A redirecting to one of
        /// realm B), so the task's last 401 is that realm's, not this credential's. Another method
        /// in the same realm is no such sign: a server offering Digest and Basic asks for the
        /// second after refusing the first.
        var passed = false

        func isAtServer(host: String?, port: Int?) -> Bool {
            (host.map { ProtectionSpace.foldedHost($0) == ProtectionSpace.foldedHost(self.host) } ?? true) && (port.map { $0 == self.port } ?? true)
        }
    }

    struct Entry: Sendable {
        var uses: [Use] = []
        /// Per space: whether the last answer the task got there was a credential.
        var lastAnswerWasCredential: [String: Bool] = [:]
        var decisions: [DecisionSummary] = []
        var fallbacks: [FallbackSummary] = []
    }

    /// What a task's end leaves to do and to tell.
    struct Completion: Sendable {
        var reports: [PendingOutcome]
        var decisions: [DecisionSummary]
        var fallbacks: [FallbackSummary]
        /// The task's end was seen before: nothing new to tell.
        var repeated = false
    }

    private var entries: [Int: Entry] = [:]
    /// Recently completed tasks, oldest first, so that an answer arriving after its task ended
    /// is recognised as late rather than starting a new entry that would never complete.
    private var completed: [Int] = []
    private var completedSet: Set<Int> = []
    static let completedMemory = 1024

    /// A challenge arrived for `task` at `spaceKey`. When it is a retry (`previousFailureCount > 0`)
    /// and the last answer the task got for that space was a credential, the upstream server
    /// refused that credential: marks it rejected with `status` and returns it.
    mutating func retry(task: Int, spaceKey: String, previousFailureCount: Int, status: Int) -> Use? {
        guard previousFailureCount > 0, var entry = entries[task], entry.lastAnswerWasCredential[spaceKey] == true,
            let index = entry.uses.lastIndex(where: { $0.spaceKey == spaceKey })
        else { return nil }
        if entry.uses[index].rejectedWith == nil { entry.uses[index].rejectedWith = status }
        let use = entry.uses[index]
        entries[task] = entry
        return use
    }

    /// A challenge arrived for `task` at origin `space`: the credentials the task was given for
    /// the server's other realms, with the same method, got past them.
    mutating func challenged(task: Int, space: ProtectionSpace) {
        guard !space.isProxy, var entry = entries[task] else { return }
        for index in entry.uses.indices {
            let use = entry.uses[index]
            guard !use.isProxy, use.rejectedWith == nil, use.method == space.authenticationMethod, (use.realm ?? "") != (space.realm ?? "") else { continue }
            if use.isAtServer(host: space.host, port: space.effectivePort) { entry.uses[index].passed = true }
        }
        entries[task] = entry
    }

    /// The service says it counted the rejection of `decisionId` (a retry's `countedRejection`).
    mutating func serviceCounted(_ decisionId: UUID) {
        for (task, var entry) in entries {
            guard let index = entry.uses.firstIndex(where: { $0.decisionId == decisionId }) else { continue }
            entry.uses[index].countedByService = true
            entries[task] = entry
            return
        }
    }

    /// Records a decision applied to `task` (and the credential it gave, if any). Returns false
    /// when the task already ended: nothing is recorded, and the caller settles the decision.
    mutating func record(_ summary: DecisionSummary, use: Use?, task: Int) -> Bool {
        guard !completedSet.contains(task) else { return false }
        var entry = entries[task] ?? Entry()
        entry.decisions.append(summary)
        entry.lastAnswerWasCredential[summary.protectionSpace.ledgerKey] = use != nil
        if let use { entry.uses.append(use) }
        entries[task] = entry
        return true
    }

    /// Records a fallback applied to `task`.
    mutating func record(_ fallback: FallbackSummary, task: Int) {
        guard !completedSet.contains(task) else { return }
        var entry = entries[task] ?? Entry()
        entry.fallbacks.append(fallback)
        entry.lastAnswerWasCredential[fallback.protectionSpace.ledgerKey] = false
        entries[task] = entry
    }

    /// The task ended with `status` from `host`:`port` (nil: no HTTP response), `endedWithError`
    /// when it failed (cancelled, timed out, connection lost). Every credential it was given gets
    /// an outcome:
    /// - refused by a later challenge of the same space: `rejected` with that challenge's status,
    ///   unless the service already counted it from the retry itself;
    /// - passed, when another realm of the same server challenged the task afterwards:
    ///   `accepted`, without a status (the task's own says nothing of this credential);
    /// - otherwise judged by the final response: the space's authentication failure (401 from
    ///   that origin, 407 from a proxy) is `rejected`; a 403 from that origin is `refused`, as
    ///   the service records a 403 forwarded raw (the server took the credential and refuses
    ///   anyway: neither counted nor a reset of the count, since some servers answer a wrong
    ///   password with 403); any other status means the credential got past authentication and
    ///   is `accepted`, but for a 400 or 5xx from the origin, or a proxy's 407 that kept the request
    ///   from it (`Outcome.notChallenged(status:)`);
    ///   no response at all is `cancelled`;
    /// - but a task that failed with the space's authentication failure as its response is
    ///   `cancelled`: URLSession keeps the 401/407 that asked for the credential as the task's
    ///   response while it sends the request again, so when that request gets no answer (timed
    ///   out, cancelled by the app) the 401/407 is not the server's verdict on the credential. A
    ///   401/407 that did answer it raises the next challenge, which marks it refused above.
    mutating func complete(task: Int, status: Int?, host: String?, port: Int?, endedWithError: Bool = false) -> Completion {
        guard remember(completedTask: task) else { return Completion(reports: [], decisions: [], fallbacks: [], repeated: true) }
        guard let entry = entries.removeValue(forKey: task) else { return Completion(reports: [], decisions: [], fallbacks: []) }
        var reports: [PendingOutcome] = []
        for use in entry.uses {
            if let rejectedWith = use.rejectedWith {
                if !use.countedByService {
                    reports.append(PendingOutcome(decisionId: use.decisionId, report: OutcomeReport(outcome: .rejected, upstreamStatus: rejectedWith)))
                }
                continue
            }
            if use.passed {
                reports.append(PendingOutcome(decisionId: use.decisionId, report: OutcomeReport(outcome: .accepted)))
                continue
            }
            guard let status else {
                reports.append(PendingOutcome(decisionId: use.decisionId, report: OutcomeReport(outcome: .cancelled)))
                continue
            }
            let outcome: Outcome
            if use.isProxy {
                outcome = status == 407 ? .rejected : .accepted
            } else {
                let sameServer = use.isAtServer(host: host, port: port)
                switch status {
                case 401 where sameServer: outcome = .rejected
                case 403 where sameServer: outcome = .refused
                default: outcome = .notChallenged(status: status)
                }
            }
            if outcome == .rejected, endedWithError {
                reports.append(PendingOutcome(decisionId: use.decisionId, report: OutcomeReport(outcome: .cancelled)))
                continue
            }
            reports.append(PendingOutcome(decisionId: use.decisionId, report: OutcomeReport(outcome: outcome, upstreamStatus: status)))
        }
        return Completion(reports: reports, decisions: entry.decisions, fallbacks: entry.fallbacks)
    }

    /// Tasks with an entry (for tests and diagnostics).
    var openTasks: Set<Int> { Set(entries.keys) }

    /// False when the task's end was seen before.
    private mutating func remember(completedTask task: Int) -> Bool {
        guard completedSet.insert(task).inserted else { return false }
        completed.append(task)
        if completed.count > Self.completedMemory {
            completedSet.remove(completed.removeFirst())
        }
        return true
    }
}
