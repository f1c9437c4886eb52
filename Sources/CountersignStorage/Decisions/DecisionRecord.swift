public import CountersignCore
public import Foundation

/// A decision to record, with the state versions it was decided against.
public struct DecisionRecord: Sendable {
    public var id: UUID
    public var tenantID: UUID
    public var sessionID: UUID
    public var clientID: String
    public var keyID: UUID
    public var taskID: String
    /// What was asked: `challenge`, `response` (raw 401/407), `securityCheck`, ...
    public var kind: String
    /// Normalized.
    public let space: ProtectionSpace
    /// `space.key`, worked out once.
    public let spaceKey: String
    public var previousFailureCount: Int
    public var plan: DecisionPlan
    /// The user name released, kept to recognise a retry that names it.
    public var releasedUser: String?
    /// The tenant and session state versions the plan was made from.
    public var tenantStateVersion: Int64
    public var sessionStateVersion: Int64
    /// For a plan that depends on how often its credential was refused in this space (a
    /// security-check answer): the failures it was made from. Recorded only if they are still
    /// the counter's; `nil` for every other decision.
    public var expectedFailures: Int?

    /// Where the session remembers (or would remember) the answer: the protection space's key,
    /// or the plan's own key (server trust adds the presented chain's digest).
    var memoryKey: String { plan.memoryKey ?? spaceKey }

    public init(
        id: UUID = UUID.timeOrdered(),
        tenantID: UUID,
        sessionID: UUID,
        clientID: String,
        keyID: UUID,
        taskID: String,
        kind: String = "challenge",
        space: ProtectionSpace,
        previousFailureCount: Int,
        plan: DecisionPlan,
        releasedUser: String?,
        tenantStateVersion: Int64,
        sessionStateVersion: Int64
    ) {
        self.id = id
        self.tenantID = tenantID
        self.sessionID = sessionID
        self.clientID = clientID
        self.keyID = keyID
        self.taskID = taskID
        self.kind = kind
        self.space = space.normalized
        self.spaceKey = self.space.key
        self.previousFailureCount = previousFailureCount
        self.plan = plan
        self.releasedUser = releasedUser
        self.tenantStateVersion = tenantStateVersion
        self.sessionStateVersion = sessionStateVersion
    }
}

/// What became of a decision sent to the writer.
public enum DecisionCommit: Sendable, Equatable {
    /// Recorded durably. `failures`: the released credential's rejections so far for this
    /// protection space.
    case recorded(failures: Int)
    /// Not recorded: the tenant's or the session's state changed since the decision was
    /// made. Decide again from fresh state.
    case stale
    /// Not recorded: the session has ended (invalidated, gone, or expired by the database's
    /// clock, which may run ahead of this instance's). Deciding again cannot help: the answer is
    /// `session_invalidated`.
    case sessionEnded
}
