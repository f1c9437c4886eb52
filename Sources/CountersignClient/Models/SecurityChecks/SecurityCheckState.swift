public import Foundation

/// Where one client stands with one security check.
public struct SecurityCheckState: Codable, Hashable, Sendable {
    public var securityCheck: String
    public var clientId: String
    /// The state now (`expired` once the stored state's time is up).
    public var state: SecurityCheckStateName
    public var storedState: SecurityCheckStateName
    /// Failed attempts that count now.
    public var attempts: Int
    /// By the handler's `maxAttempts`; nil when the check has no handler any more.
    public var remainingAttempts: Int?
    public var expiresAt: Date
    public var totalFailures: Int
    public var blocks: Int
    public var lastChallengeAt: Date?
    public var lastFailureAt: Date?
    /// The server's failure message, cut to 200 characters.
    public var lastFailure: String?
    public var lastSuccessAt: Date?
    /// The answer the last failure or success report applied to.
    public var lastDecisionId: UUID?
    public var updatedAt: Date
}
