public import Foundation

/// The service's answer to a forwarded raw response: the disposition and, for `useCredential`,
/// the ready header to add to the request (``authorization``).
///
/// A Digest answer carries only the response hash, never the password. For NTLM, a handshake no
/// single header can answer, ``credential`` holds the password instead (``reasonCode``
/// `ntlm_handshake`). Printing, interpolating or `dump`ing an answer never shows the header's
/// value or a password.
public struct ResponseAnswer: Codable, Hashable, Sendable {
    /// The recorded decision; outcomes are reported against it (``CountersignClient/reportOutcome(_:for:)``),
    /// and a 403 may name it as ``RawResponse/previousDecisionId``.
    public var decisionId: UUID
    public var disposition: Disposition
    /// Why, as a stable code.
    public var reasonCode: ResponseReasonCode
    /// With `useCredential` for Basic or Digest: the header to add before sending the request again.
    public var authorization: AuthorizationHeader?
    /// With `useCredential` for NTLM only: the credential for the client's own handshake.
    public var credential: ReleasedCredential?
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
    /// The earlier decision this response showed rejected (a second 401/407 after its header).
    public var countedRejection: UUID?
    /// The protection space of the challenge the decision is about.
    public var protectionSpace: DecisionRecord.Space
    /// Every challenge of the response, in the server's order, with what became of it (empty for
    /// a 403).
    public var challenges: [ChallengeReport]

    public init(
        decisionId: UUID,
        disposition: Disposition,
        reasonCode: ResponseReasonCode,
        authorization: AuthorizationHeader? = nil,
        credential: ReleasedCredential? = nil,
        persistence: Persistence = .none,
        scope: DecisionScope = .task,
        remainingAttempts: Int? = nil,
        blockedUntil: Date? = nil,
        rule: RuleReference? = nil,
        source: DecisionSource,
        reason: String,
        countedRejection: UUID? = nil,
        protectionSpace: DecisionRecord.Space,
        challenges: [ChallengeReport] = []
    ) {
        self.decisionId = decisionId
        self.disposition = disposition
        self.reasonCode = reasonCode
        self.authorization = authorization
        self.credential = credential
        self.persistence = persistence
        self.scope = scope
        self.remainingAttempts = remainingAttempts
        self.blockedUntil = blockedUntil
        self.rule = rule
        self.source = source
        self.reason = reason
        self.countedRejection = countedRejection
        self.protectionSpace = protectionSpace
        self.challenges = challenges
    }

    /// The challenge the answer is for, when one was answered.
    public var chosenChallenge: ChallengeReport? { challenges.first { $0.status == .chosen } }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case decisionId, disposition, reasonCode, authorization, credential, persistence, scope, remainingAttempts, blockedUntil, rule
        case source, reason, countedRejection, protectionSpace, challenges
    }

    public func encode(to encoder: any Encoder) throws {
        // Every member is present in the contract, null when empty.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(decisionId, forKey: .decisionId)
        try container.encode(disposition, forKey: .disposition)
        try container.encode(reasonCode, forKey: .reasonCode)
        try container.encode(authorization, forKey: .authorization)
        try container.encode(credential, forKey: .credential)
        try container.encode(persistence, forKey: .persistence)
        try container.encode(scope, forKey: .scope)
        try container.encode(remainingAttempts, forKey: .remainingAttempts)
        try container.encode(blockedUntil, forKey: .blockedUntil)
        try container.encode(rule, forKey: .rule)
        try container.encode(source, forKey: .source)
        try container.encode(reason, forKey: .reason)
        try container.encode(countedRejection, forKey: .countedRejection)
        try container.encode(protectionSpace, forKey: .protectionSpace)
        try container.encode(challenges, forKey: .challenges)
    }
}
