public import CountersignCore
public import Foundation

/// The answer to one security check of a challenge list, as the client's challenge handler
/// acts on it.
public struct SecurityCheckAnswer: Sendable, Encodable {
    public var action: SecurityCheckAnswerAction
    /// With `submitChallengeAnswer`: the object to pass to `submitChallengeAnswer(_:)`. Holds
    /// the secret: the only place one leaves the service for a security check.
    public var answer: JSONValue?
    public var decisionId: UUID
    public var persistence: Persistence
    /// Answers the client may still try, by the smaller of the server's count and the central one.
    public var remainingAttempts: Int?
    /// The client's state for the check (`attempting`, `blocked`, ...), when a handler counts it.
    public var state: SecurityCheckState.Name?
    public var blockedUntil: Date?
    public var reason: String

    public func encode(to encoder: any Encoder) throws {
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

    enum CodingKeys: String, CodingKey {
        case action, answer, decisionId, persistence, remainingAttempts, state, blockedUntil, reason
    }
}

// The answer object may carry a password: printing an answer, on purpose or by string
// interpolation into a log line, must not show it.
extension SecurityCheckAnswer: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        "SecurityCheckAnswer(\(action.rawValue), decision: \(decisionId), answer: \(answer == nil ? "none" : "redacted"))"
    }

    public var debugDescription: String { description }
}
