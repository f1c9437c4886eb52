public import CountersignCore
public import Foundation

/// One row of `security_check_states`: where a client stands with a security check, and when
/// things last happened. Never holds a secret.
public struct SecurityCheckStateEntry: Sendable, Hashable {
    public var securityCheck: String
    public var clientID: String
    public var state: SecurityCheckState
    public var lastChallengeAt: Date?
    public var lastFailureAt: Date?
    /// The server's failure message, cut to 200 characters.
    public var lastFailure: String?
    public var lastSuccessAt: Date?
    /// The decision the last failure or success report applied to.
    public var lastDecisionID: UUID?
    public var updatedAt: Date
    /// The database's time when the row was read: what `state` is judged against.
    public var readAt: Date

    static let columns = """
        s.security_check, s.client_id, s.state, s.attempts, s.expires_at, s.total_failures, s.blocks, s.last_challenge_at,
        s.last_failure_at, s.last_failure, s.last_success_at, s.last_decision_id, s.updated_at, now() AS read_at
        """
}
