public import Foundation

/// A decision the delegate applied, as apps may show or log it: never a secret.
public struct DecisionSummary: Sendable, Hashable {
    /// The URLSession task it was for; `nil` for a session-wide challenge.
    public var taskIdentifier: Int?
    public var protectionSpace: ProtectionSpace
    public var decisionId: UUID
    /// What the service answered.
    public var disposition: Disposition
    /// What the delegate handed URLSession (differs on Linux, see ``CountersignSessionDelegate``).
    public var appliedDisposition: Disposition
    /// The user of the released credential, if one was released.
    public var user: String?
    public var persistence: Persistence
    public var scope: DecisionScope
    public var rule: RuleReference?
    public var source: DecisionSource
    public var reason: String
    public var remainingAttempts: Int?
    public var blockedUntil: Date?
    public var countedRejection: UUID?

    init(_ answer: DecisionAnswer, taskIdentifier: Int?, space: ProtectionSpace, applied: Disposition) {
        self.taskIdentifier = taskIdentifier
        protectionSpace = space
        decisionId = answer.decisionId
        disposition = answer.disposition
        appliedDisposition = applied
        user = answer.credential?.user
        persistence = answer.persistence
        scope = answer.scope
        rule = answer.rule
        source = answer.source
        reason = answer.reason
        remainingAttempts = answer.remainingAttempts
        blockedUntil = answer.blockedUntil
        countedRejection = answer.countedRejection
    }
}

extension DecisionSummary: CustomStringConvertible {
    public var description: String {
        var text = "\(decisionId.uuidString.lowercased()) \(disposition.rawValue)"
        if appliedDisposition != disposition { text += " (applied: \(appliedDisposition.rawValue))" }
        text += " rule: \(rule?.description ?? "none")"
        if let user { text += " user: \(user)" }
        if let remainingAttempts { text += " remaining attempts: \(remainingAttempts)" }
        if let blockedUntil { text += " blocked until: \(blockedUntil.formatted(.iso8601))" }
        if let countedRejection { text += " counted the rejection of \(countedRejection.uuidString.lowercased())" }
        text += " [\(source)] \(reason)"
        return text
    }
}
