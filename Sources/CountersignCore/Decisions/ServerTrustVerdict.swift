public import Foundation

/// What the trust evaluation of a server's chain concluded, as decisions record, remember and
/// answer it. Certificates are public, so nothing here is secret.
public struct ServerTrustVerdict: Hashable, Sendable, Codable {
    /// Why a chain is not trusted: a stable `code` (`untrusted_root`, `expired`,
    /// `not_yet_valid`, `hostname_mismatch`, `pin_mismatch`, `bad_key_usage`,
    /// `malformed_certificate`, `invalid_chain`) and a `detail` for people.
    public struct Failure: Hashable, Sendable, Codable {
        public var code: String
        public var detail: String
        /// Position in the built chain of the certificate at fault (0 is the leaf), when known.
        public var depth: Int?

        public init(code: String, detail: String, depth: Int?) {
            self.code = code
            self.detail = detail
            self.depth = depth
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(code, forKey: .code)
            try container.encode(detail, forKey: .detail)
            try container.encode(depth, forKey: .depth)
        }
    }

    public var trusted: Bool
    /// The host the chain was checked against.
    public var host: String
    public var failure: Failure?
    /// Subjects of the verified path, leaf first, anchor last (RFC 2253); empty when no path
    /// reached an anchor.
    public var verifiedChain: [String]
    public var leafSubject: String?
    /// The configured pin that matched, when pins are configured and the chain is trusted.
    public var matchedPin: String?
    public var evaluatedAt: Date
    /// SHA-256 over the presented chain (see `PresentedChain.digest`), lowercase hex.
    public var chainSHA256: String
    /// The end of the trust: the earliest `notAfter` of the verified path. A session remembers a
    /// trusted chain until then, and evaluates it again afterwards; nil when the chain is not
    /// trusted, or the rule excused validity dates (`allowExpired`).
    public var validUntil: Date?

    public init(
        trusted: Bool,
        host: String,
        failure: Failure?,
        verifiedChain: [String],
        leafSubject: String?,
        matchedPin: String?,
        evaluatedAt: Date,
        chainSHA256: String,
        validUntil: Date? = nil
    ) {
        self.trusted = trusted
        self.host = host
        self.failure = failure
        self.verifiedChain = verifiedChain
        self.leafSubject = leafSubject
        self.matchedPin = matchedPin
        self.evaluatedAt = evaluatedAt
        self.chainSHA256 = chainSHA256
        self.validUntil = validUntil
    }

    enum CodingKeys: String, CodingKey {
        case trusted, host, failure, verifiedChain, leafSubject, matchedPin, evaluatedAt, validUntil
        case chainSHA256 = "chainSha256"
    }

    // Absent values are written as null, as every API object is.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(trusted, forKey: .trusted)
        try container.encode(host, forKey: .host)
        try container.encode(failure, forKey: .failure)
        try container.encode(verifiedChain, forKey: .verifiedChain)
        try container.encode(leafSubject, forKey: .leafSubject)
        try container.encode(matchedPin, forKey: .matchedPin)
        try container.encode(evaluatedAt, forKey: .evaluatedAt)
        try container.encode(chainSHA256, forKey: .chainSHA256)
        try container.encode(validUntil, forKey: .validUntil)
    }
}
