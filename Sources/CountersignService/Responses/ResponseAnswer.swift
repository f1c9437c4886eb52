public import CountersignCore
public import Foundation

/// The answer to a forwarded raw response, as the client receives it.
public struct ResponseAnswer: Sendable, Encodable {
    /// A header the client adds to the request before sending it again.
    public struct HeaderField: Sendable, Encodable, Hashable {
        /// `Authorization` or `Proxy-Authorization`.
        public var name: String
        public var value: String
    }

    /// The protection space the decision is about.
    public struct Space: Sendable, Encodable, Hashable {
        public var host: String
        public var port: Int
        public var `protocol`: String?
        public var realm: String?
        public var authenticationMethod: String
        public var isProxy: Bool

        init(_ space: ProtectionSpace) {
            host = space.host
            port = space.port
            `protocol` = space.protocolName
            realm = space.realm
            authenticationMethod = space.method.rawValue
            isProxy = space.isProxy
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(host, forKey: .host)
            try container.encode(port, forKey: .port)
            try container.encode(`protocol`, forKey: .protocol)
            try container.encode(realm, forKey: .realm)
            try container.encode(authenticationMethod, forKey: .authenticationMethod)
            try container.encode(isProxy, forKey: .isProxy)
        }

        enum CodingKeys: String, CodingKey { case host, port, `protocol`, realm, authenticationMethod, isProxy }
    }

    /// What became of one challenge of the response.
    public struct ChallengeReport: Sendable, Encodable, Hashable {
        public var index: Int
        /// The scheme as the server spelled it.
        public var scheme: String
        public var realm: String?
        /// Such as `Digest SHA-256`, when the scheme (and for Digest the algorithm) is known.
        public var mechanism: String?
        /// Digest `stale=true`.
        public var stale: Bool
        /// `chosen`, `lowerPreference`, `noCredential`, `unsupportedScheme`,
        /// `unsupportedAlgorithm`, `malformed`.
        public var status: String
        /// For `malformed`: the code of what is wrong (`missing_challenge_parameter`...).
        public var code: String?
        public var reason: String

        init(_ assessment: AuthenticationChallengeAssessment, plans: [String: DecisionPlan], context: RawResponseContext) {
            index = assessment.index
            scheme = assessment.challenge.schemeName
            realm = assessment.digest?.realm ?? assessment.challenge.realm
            mechanism = assessment.mechanism.map(String.init(describing:))
            stale = assessment.digest?.isStale ?? false
            reason = assessment.reason
            switch assessment.status {
            case .chosen: status = "chosen"
            case .lowerPreference: status = "lowerPreference"
            case .unsupportedScheme: status = "unsupportedScheme"
            case .unsupportedAlgorithm: status = "unsupportedAlgorithm"
            case .noCredential:
                status = "noCredential"
                // The engine says better than the selector why no credential is usable here.
                let space = context.protectionSpace(scheme: assessment.challenge.scheme, realm: realm)
                if let plan = plans[space.key] { reason = plan.reason }
            case .malformed(let malformed):
                status = "malformed"
                code = malformed.rawValue
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(index, forKey: .index)
            try container.encode(scheme, forKey: .scheme)
            try container.encode(realm, forKey: .realm)
            try container.encode(mechanism, forKey: .mechanism)
            try container.encode(stale, forKey: .stale)
            try container.encode(status, forKey: .status)
            try container.encode(code, forKey: .code)
            try container.encode(reason, forKey: .reason)
        }

        enum CodingKeys: String, CodingKey { case index, scheme, realm, mechanism, stale, status, code, reason }
    }

    public var decisionId: UUID
    public var disposition: Disposition
    public var reasonCode: ResponseReasonCode
    /// With `useCredential` for Basic or Digest: the header to add. Digest answers never carry
    /// the password, only the hash that proves it.
    public var authorization: HeaderField?
    /// With `useCredential` for NTLM only: the credential for the client's own handshake.
    public var credential: ReleasedCredential?
    public var persistence: Persistence
    public var scope: DecisionScope
    public var remainingAttempts: Int?
    public var blockedUntil: Date?
    public var rule: RuleReference?
    public var source: DecisionSource
    public var reason: String
    /// The earlier decision this response showed rejected (a second 401/407 for its header).
    public var countedRejection: UUID?
    public var protectionSpace: Space
    /// Every challenge of the response, in the server's order (empty for a 403).
    public var challenges: [ChallengeReport]

    public func encode(to encoder: any Encoder) throws {
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

    enum CodingKeys: String, CodingKey {
        case decisionId, disposition, reasonCode, authorization, credential, persistence, scope, remainingAttempts, blockedUntil, rule,
            source, reason, countedRejection, protectionSpace, challenges
    }
}

// The Authorization value of a Basic answer carries the password (base64 is no protection), and a
// Digest one is as good as the password for its nonce: neither may reach a log line or a
// debugger's dump by accident.
extension ResponseAnswer.HeaderField: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "\(name): redacted" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["name": name, "value": "redacted"], displayStyle: .struct) }
}
