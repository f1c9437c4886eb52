public import Foundation

/// The service's answer to a challenge: the disposition and, for `useCredential`, the credential.
public struct DecisionAnswer: Codable, Hashable, Sendable {
    /// The recorded decision; outcomes are reported against it.
    public var decisionId: UUID
    public var disposition: Disposition
    /// With `useCredential`: what to answer with. Its description and mirror never show the secret.
    public var credential: ReleasedCredential?
    /// How long to keep the credential.
    public var persistence: Persistence
    public var scope: DecisionScope
    /// Rejections the credential may still take before it blocks.
    public var remainingAttempts: Int?
    /// Until when the credential is blocked, when it is.
    public var blockedUntil: Date?
    /// The rule that decided, if any.
    public var rule: RuleReference?
    public var source: DecisionSource
    /// Why, in words safe to show.
    public var reason: String
    /// The earlier decision this challenge showed rejected (a retry naming its user), if any.
    public var countedRejection: UUID?
    /// Server-trust challenges: how the service judged the chain (also when it is not trusted).
    public var evaluation: ServerTrustEvaluation?

    public init(
        decisionId: UUID,
        disposition: Disposition,
        credential: ReleasedCredential? = nil,
        persistence: Persistence = .none,
        scope: DecisionScope = .task,
        remainingAttempts: Int? = nil,
        blockedUntil: Date? = nil,
        rule: RuleReference? = nil,
        source: DecisionSource,
        reason: String,
        countedRejection: UUID? = nil,
        evaluation: ServerTrustEvaluation? = nil
    ) {
        self.decisionId = decisionId
        self.disposition = disposition
        self.credential = credential
        self.persistence = persistence
        self.scope = scope
        self.remainingAttempts = remainingAttempts
        self.blockedUntil = blockedUntil
        self.rule = rule
        self.source = source
        self.reason = reason
        self.countedRejection = countedRejection
        self.evaluation = evaluation
    }

    enum CodingKeys: String, CodingKey {
        case decisionId, disposition, credential, persistence, scope, remainingAttempts, blockedUntil, rule, source, reason, countedRejection
        case evaluation
    }

    public func encode(to encoder: any Encoder) throws {
        // Every member is present in the contract, null when empty.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(decisionId, forKey: .decisionId)
        try container.encode(disposition, forKey: .disposition)
        try container.encode(credential, forKey: .credential)
        try container.encode(persistence, forKey: .persistence)
        try container.encode(scope, forKey: .scope)
        try container.encode(remainingAttempts, forKey: .remainingAttempts)
        try container.encode(blockedUntil, forKey: .blockedUntil)
        try container.encode(rule, forKey: .rule)
        try container.encode(source, forKey: .source)
        try container.encode(reason, forKey: .reason)
        try container.encode(countedRejection, forKey: .countedRejection)
        try container.encode(evaluation, forKey: .evaluation)
    }
}
