public import CountersignCore
public import Foundation

/// A decision record as admins list it and outcome reports return it. Never holds a secret.
public struct DecisionEntry: Sendable, Codable, Hashable {
    public struct Space: Sendable, Codable, Hashable {
        public var host: String
        public var port: Int
        public var `protocol`: String?
        public var realm: String?
        public var authenticationMethod: String
        public var isProxy: Bool
    }

    public var id: UUID
    public var sessionId: UUID
    public var clientId: String
    public var keyId: UUID
    public var taskId: String
    public var kind: String
    public var protectionSpace: Space
    public var previousFailureCount: Int
    public var disposition: Disposition
    public var persistence: Persistence
    public var scope: DecisionScope
    public var source: String
    public var reason: String
    public var rule: RuleReference?
    public var credentialId: UUID?
    public var blockedUntil: Date?
    public var createdAt: Date
    public var outcome: Outcome?
    public var outcomeStatus: Int?
    public var outcomeAt: Date?
    /// `report` (the client said so), `retry` (the same protection space came back naming the
    /// released user), `session` (the session was invalidated with `cancel`).
    public var outcomeSource: String?
    /// Whether this decision's rejection was counted against its credential.
    public var countedRejection: Bool

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(sessionId, forKey: .sessionId)
        try container.encode(clientId, forKey: .clientId)
        try container.encode(keyId, forKey: .keyId)
        try container.encode(taskId, forKey: .taskId)
        try container.encode(kind, forKey: .kind)
        try container.encode(protectionSpace, forKey: .protectionSpace)
        try container.encode(previousFailureCount, forKey: .previousFailureCount)
        try container.encode(disposition, forKey: .disposition)
        try container.encode(persistence, forKey: .persistence)
        try container.encode(scope, forKey: .scope)
        try container.encode(source, forKey: .source)
        try container.encode(reason, forKey: .reason)
        try container.encode(rule, forKey: .rule)
        try container.encode(credentialId, forKey: .credentialId)
        try container.encode(blockedUntil, forKey: .blockedUntil)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(outcome, forKey: .outcome)
        try container.encode(outcomeStatus, forKey: .outcomeStatus)
        try container.encode(outcomeAt, forKey: .outcomeAt)
        try container.encode(outcomeSource, forKey: .outcomeSource)
        try container.encode(countedRejection, forKey: .countedRejection)
    }
}

/// What the client saw happen after a decision.
public enum Outcome: String, StrictStringEnum {
    case accepted
    case rejected
    case cancelled
    /// The server answered 403 to the request that carried the credential: it took the
    /// credential and refuses anyway. Not a rejection of the credential; it is not counted.
    /// A `rejected` report with upstream status 403 is recorded as this.
    case refused

    /// The outcome to record for a report: `rejected` with a 403 is `refused`, because a server
    /// that refuses a known user says nothing against the credential (CFNetwork gives up there
    /// too, without prompting again).
    public static func recorded(_ outcome: Outcome, upstreamStatus: Int?) -> Outcome {
        outcome == .rejected && upstreamStatus == 403 ? .refused : outcome
    }
}
