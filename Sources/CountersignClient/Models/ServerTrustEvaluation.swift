public import Foundation

/// How the service judged a server's certificate chain (server-trust challenges): whether it is
/// trusted and, when not, which check failed.
public struct ServerTrustEvaluation: Codable, Hashable, Sendable {
    /// The failed check: a stable `code` (`untrusted_root`, `expired`, `not_yet_valid`,
    /// `hostname_mismatch`, `pin_mismatch`, `bad_key_usage`, `malformed_certificate`,
    /// `invalid_chain`) and a `detail` for people.
    public struct Failure: Codable, Hashable, Sendable {
        public var code: String
        public var detail: String
        /// The certificate at fault, by position in the verified chain (0 is the leaf).
        public var depth: Int?

        public init(code: String, detail: String, depth: Int? = nil) {
            self.code = code
            self.detail = detail
            self.depth = depth
        }
    }

    public var trusted: Bool
    /// The host the chain was checked against.
    public var host: String
    public var failure: Failure?
    /// Subjects of the verified path, leaf first, anchor last.
    public var verifiedChain: [String]
    public var leafSubject: String?
    /// The configured SPKI pin that matched.
    public var matchedPin: String?
    public var evaluatedAt: Date
    /// SHA-256 over the presented chain, hex.
    public var chainSha256: String
    /// Trusted chains: the earliest `notAfter` of the verified path; the service answers the
    /// chain from the session's memory until then.
    public var validUntil: Date?

    public init(
        trusted: Bool,
        host: String,
        failure: Failure? = nil,
        verifiedChain: [String] = [],
        leafSubject: String? = nil,
        matchedPin: String? = nil,
        evaluatedAt: Date,
        chainSha256: String,
        validUntil: Date? = nil
    ) {
        self.trusted = trusted
        self.host = host
        self.failure = failure
        self.verifiedChain = verifiedChain
        self.leafSubject = leafSubject
        self.matchedPin = matchedPin
        self.evaluatedAt = evaluatedAt
        self.chainSha256 = chainSha256
        self.validUntil = validUntil
    }
}
