public import Foundation

/// An answer a session remembers for one protection space: a credential released
/// `forSession`, or the answer to a session-wide challenge. Later challenges of the session for
/// that space get it without a new policy evaluation, until the session ends or the credential
/// is rejected.
public struct SessionMemoryEntry: Hashable, Sendable, Codable {
    public var spaceKey: String
    public var disposition: Disposition
    public var credentialID: UUID?
    public var persistence: Persistence
    public var ruleID: String?
    public var ruleName: String?
    /// The rule's limits, kept so that a remembered credential still blocks by its rule.
    public var maxFailures: Int?
    public var blockSchedule: BlockSchedule?
    public var blockedDisposition: Disposition?
    /// For a trusted server chain: the evaluation that trusted it, answered again as it was.
    public var trust: ServerTrustVerdict?

    public init(
        spaceKey: String,
        disposition: Disposition,
        credentialID: UUID?,
        persistence: Persistence,
        ruleID: String?,
        ruleName: String?,
        maxFailures: Int?,
        blockSchedule: BlockSchedule? = nil,
        blockedDisposition: Disposition?,
        trust: ServerTrustVerdict? = nil
    ) {
        self.spaceKey = spaceKey
        self.disposition = disposition
        self.credentialID = credentialID
        self.persistence = persistence
        self.ruleID = ruleID
        self.ruleName = ruleName
        self.maxFailures = maxFailures
        self.blockSchedule = blockSchedule
        self.blockedDisposition = blockedDisposition
        self.trust = trust
    }
}
