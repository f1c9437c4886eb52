public import Foundation

/// What the engine decided for one challenge, before it is recorded and answered.
public struct DecisionPlan: Hashable, Sendable {
    public var disposition: Disposition
    /// The credential to release with `useCredential`.
    public var credential: Credential?
    public var persistence: Persistence
    public var scope: DecisionScope
    public var rule: RuleReference?
    public var source: DecisionSource
    /// A short sentence for people reading the answer or the audit.
    public var reason: String
    /// When the credential the rule would release is blocked: until when.
    public var blockedUntil: Date?
    /// The rule's rejection limit for the released (or blocked) credential.
    public var maxFailures: Int?
    public var blockSchedule: BlockSchedule?
    /// What a remembered credential answers once it is blocked.
    public var blockedDisposition: Disposition?
    /// Store the answer in the session's memory for this protection space.
    public var rememberInSession: Bool
    /// Work still to do before this plan is an answer (server-trust evaluation, identity
    /// selection); see `DecisionEngine.resolve`. Never recorded while set.
    public var pending: PendingEvaluation?
    /// The server-trust evaluation behind the answer, for server-trust challenges.
    public var trust: ServerTrustVerdict?
    /// The session-memory key to remember the answer under, when it is not the protection
    /// space's key (server trust adds the chain's digest: another chain is evaluated again).
    public var memoryKey: String?
    /// Decided by the policy although the session remembers an answer under `memoryKey`, which
    /// did not hold (see `DecisionEngine.decide`).
    public var passedOverMemory = false

    public init(
        disposition: Disposition,
        credential: Credential? = nil,
        persistence: Persistence = .none,
        scope: DecisionScope,
        rule: RuleReference? = nil,
        source: DecisionSource,
        reason: String,
        blockedUntil: Date? = nil,
        maxFailures: Int? = nil,
        blockSchedule: BlockSchedule? = nil,
        blockedDisposition: Disposition? = nil,
        rememberInSession: Bool = false,
        pending: PendingEvaluation? = nil,
        trust: ServerTrustVerdict? = nil,
        memoryKey: String? = nil
    ) {
        self.disposition = disposition
        self.credential = credential
        self.persistence = persistence
        self.scope = scope
        self.rule = rule
        self.source = source
        self.reason = reason
        self.blockedUntil = blockedUntil
        self.maxFailures = maxFailures
        self.blockSchedule = blockSchedule
        self.blockedDisposition = blockedDisposition
        self.rememberInSession = rememberInSession
        self.pending = pending
        self.trust = trust
        self.memoryKey = memoryKey
    }

    /// The session-memory entry this plan leaves behind, when it leaves one.
    public func memoryEntry(spaceKey: String) -> SessionMemoryEntry? {
        guard rememberInSession, pending == nil else { return nil }
        return SessionMemoryEntry(
            spaceKey: memoryKey ?? spaceKey,
            disposition: disposition,
            credentialID: credential?.id,
            persistence: persistence,
            ruleID: rule?.id,
            ruleName: rule?.name,
            maxFailures: maxFailures,
            blockSchedule: blockSchedule,
            blockedDisposition: blockedDisposition,
            trust: trust
        )
    }
}

/// The rule that decided, as decisions record it.
public struct RuleReference: Hashable, Sendable, Codable {
    public var id: String
    public var name: String?

    public init(id: String, name: String?) {
        self.id = id
        self.name = name
    }
}

/// Where an answer came from.
public enum DecisionSource: String, StrictStringEnum {
    /// The session remembered it.
    case session
    /// A policy rule decided.
    case policy
    /// No rule speaks about the protection space.
    case noMatchingRule
    /// The method is not one Countersign answers.
    case unsupportedMethod
    /// The upstream server's response decided: a 403 after a released credential (raw responses).
    case serverResponse
}
