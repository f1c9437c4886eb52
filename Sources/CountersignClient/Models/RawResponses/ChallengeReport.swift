/// What became of one challenge of a forwarded response: whether it was answered, and why not.
public struct ChallengeReport: Codable, Hashable, Sendable {
    /// Its place among the response's challenges, from 0, in the server's order.
    public var index: Int
    /// The scheme as the server spelled it.
    public var scheme: String
    public var realm: String?
    /// Such as `Digest SHA-256`, when the scheme (and for Digest the algorithm) is known.
    public var mechanism: String?
    /// Digest `stale=true`: the nonce expired, the credential was not refused.
    public var stale: Bool
    public var status: Status
    /// For ``Status/malformed``: what is wrong (`missing_challenge_parameter`, ...).
    public var code: String?
    /// Why, in words safe to show.
    public var reason: String

    public init(
        index: Int,
        scheme: String,
        realm: String? = nil,
        mechanism: String? = nil,
        stale: Bool = false,
        status: Status,
        code: String? = nil,
        reason: String
    ) {
        self.index = index
        self.scheme = scheme
        self.realm = realm
        self.mechanism = mechanism
        self.stale = stale
        self.status = status
        self.code = code
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey {
        case index, scheme, realm, mechanism, stale, status, code, reason
    }

    public func encode(to encoder: any Encoder) throws {
        // Every member is present in the contract, null when empty.
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

    /// Whether the challenge was answered. Open: values a later service adds decode as themselves.
    public struct Status: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The challenge answered.
        public static let chosen = Self(rawValue: "chosen")
        /// Answerable, but another ranks higher in the tenant's preferred schemes.
        public static let lowerPreference = Self(rawValue: "lowerPreference")
        /// No releasable credential (none fits, the rule says otherwise, or it is blocked).
        public static let noCredential = Self(rawValue: "noCredential")
        /// A scheme the service does not answer (Negotiate, Bearer, unknown ones).
        public static let unsupportedScheme = Self(rawValue: "unsupportedScheme")
        /// A Digest algorithm the service does not know.
        public static let unsupportedAlgorithm = Self(rawValue: "unsupportedAlgorithm")
        /// Broken; ``ChallengeReport/code`` says how.
        public static let malformed = Self(rawValue: "malformed")

        static let known: [Self] = [.chosen, .lowerPreference, .noCredential, .unsupportedScheme, .unsupportedAlgorithm, .malformed]
    }
}
