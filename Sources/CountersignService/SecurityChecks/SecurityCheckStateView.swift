public import CountersignCore
public import CountersignStorage
public import Foundation

/// Where a client stands with a security check, as admins and reports see it.
public struct SecurityCheckStateView: Sendable, Encodable {
    public var securityCheck: String
    public var clientId: String
    /// `attempting`, `success`, `blocked`, or `expired` once the stored state's time is up.
    public var state: SecurityCheckState.Name
    /// The state last set, whether or not it expired since.
    public var storedState: SecurityCheckState.Name
    public var attempts: Int
    /// By the handler's `maxAttempts`; `nil` when the check has no handler any more.
    public var remainingAttempts: Int?
    public var expiresAt: Date
    public var totalFailures: Int
    public var blocks: Int
    public var lastChallengeAt: Date?
    public var lastFailureAt: Date?
    public var lastFailure: String?
    public var lastSuccessAt: Date?
    public var lastDecisionId: UUID?
    public var updatedAt: Date

    public init(_ entry: SecurityCheckStateEntry, limits: SecurityCheckLimits?) {
        let now = entry.readAt
        securityCheck = entry.securityCheck
        clientId = entry.clientID
        state = entry.state.name(at: now)
        storedState = entry.state.stored
        attempts = entry.state.countedAttempts(at: now)
        remainingAttempts = limits.map { entry.state.remainingAttempts(at: now, limits: $0) }
        expiresAt = entry.state.expiresAt
        totalFailures = entry.state.totalFailures
        blocks = entry.state.blocks
        lastChallengeAt = entry.lastChallengeAt
        lastFailureAt = entry.lastFailureAt
        lastFailure = entry.lastFailure
        lastSuccessAt = entry.lastSuccessAt
        lastDecisionId = entry.lastDecisionID
        updatedAt = entry.updatedAt
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(securityCheck, forKey: .securityCheck)
        try container.encode(clientId, forKey: .clientId)
        try container.encode(state, forKey: .state)
        try container.encode(storedState, forKey: .storedState)
        try container.encode(attempts, forKey: .attempts)
        try container.encode(remainingAttempts, forKey: .remainingAttempts)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(totalFailures, forKey: .totalFailures)
        try container.encode(blocks, forKey: .blocks)
        try container.encode(lastChallengeAt, forKey: .lastChallengeAt)
        try container.encode(lastFailureAt, forKey: .lastFailureAt)
        try container.encode(lastFailure, forKey: .lastFailure)
        try container.encode(lastSuccessAt, forKey: .lastSuccessAt)
        try container.encode(lastDecisionId, forKey: .lastDecisionId)
        try container.encode(updatedAt, forKey: .updatedAt)
    }

    enum CodingKeys: String, CodingKey {
        case securityCheck, clientId, state, storedState, attempts, remainingAttempts, expiresAt, totalFailures, blocks
        case lastChallengeAt, lastFailureAt, lastFailure, lastSuccessAt, lastDecisionId, updatedAt
    }
}
