public import Foundation

/// The service's answer for one security check.
///
/// ``answer`` carries the secret (the PIN, the password): printing, interpolating or dumping a
/// value never shows it.
public struct SecurityCheckAnswer: Codable, Hashable, Sendable {
    public var action: SecurityCheckAction
    /// With `submitChallengeAnswer`: the object to submit. Secret.
    public var answer: [String: JSONValue]?
    /// The recorded decision, to name in failure and success reports.
    public var decisionId: UUID
    /// How long the client may keep the answer: this challenge (`none`) or this session (`forSession`).
    public var persistence: Persistence
    /// By the smaller of the server's count and the central one.
    public var remainingAttempts: Int?
    /// The client's state for the check, when a handler counts it.
    public var state: SecurityCheckStateName?
    public var blockedUntil: Date?
    /// Why, in words safe to show.
    public var reason: String

    public init(
        action: SecurityCheckAction,
        answer: [String: JSONValue]? = nil,
        decisionId: UUID,
        persistence: Persistence = .none,
        remainingAttempts: Int? = nil,
        state: SecurityCheckStateName? = nil,
        blockedUntil: Date? = nil,
        reason: String
    ) {
        self.action = action
        self.answer = answer
        self.decisionId = decisionId
        self.persistence = persistence
        self.remainingAttempts = remainingAttempts
        self.state = state
        self.blockedUntil = blockedUntil
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey {
        case action, answer, decisionId, persistence, remainingAttempts, state, blockedUntil, reason
    }

    public func encode(to encoder: any Encoder) throws {
        // Every member is present in the contract, null when empty.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(action, forKey: .action)
        try container.encode(answer, forKey: .answer)
        try container.encode(decisionId, forKey: .decisionId)
        try container.encode(persistence, forKey: .persistence)
        try container.encode(remainingAttempts, forKey: .remainingAttempts)
        try container.encode(state, forKey: .state)
        try container.encode(blockedUntil, forKey: .blockedUntil)
        try container.encode(reason, forKey: .reason)
    }
}

// The answer carries the secret: it must not show in a log line or a debugger.
extension SecurityCheckAnswer: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "SecurityCheckAnswer(\(action), decision: \(decisionId.uuidString.lowercased()), answer: \(answer == nil ? "nil" : "redacted"), reason: \(reason))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "action": action, "answer": answer == nil ? "nil" : "redacted", "decisionId": decisionId, "persistence": persistence,
                "remainingAttempts": remainingAttempts as Any, "state": state as Any, "blockedUntil": blockedUntil as Any, "reason": reason,
            ],
            displayStyle: .struct
        )
    }
}
