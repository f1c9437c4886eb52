/// Why a server's certificate chain was not trusted.
///
/// `code` is stable and what policies and API clients act on; `detail` is for people (the
/// OpenSSL verification error, the certificate concerned) and may change between versions.
/// Two failures are equal when their codes are equal.
public struct TrustFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable reason, `snake_case` in the API.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code as the API spells it.
        public let rawValue: String

        // Internal so that the set of codes stays defined in this file.
        init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// No path from the leaf to a trust anchor: unknown issuer, a self-signed certificate
        /// that is not an anchor, a root that is not trusted.
        public static let untrustedRoot = Code("untrusted_root")
        /// A certificate of the chain is past its `notAfter` at the evaluation time.
        public static let expired = Code("expired")
        /// A certificate of the chain is before its `notBefore` at the evaluation time.
        public static let notYetValid = Code("not_yet_valid")
        /// The leaf is not valid for the host (DNS name or IP address) that was asked for.
        public static let hostnameMismatch = Code("hostname_mismatch")
        /// The chain is otherwise trusted, but no certificate of it matches a configured pin.
        public static let pinMismatch = Code("pin_mismatch")
        /// The leaf may not authenticate a TLS server (extended key usage, key usage, Netscape
        /// cert type, or it is a CA certificate issued by another), or an issuer may not sign
        /// certificates.
        public static let badKeyUsage = Code("bad_key_usage")
        /// A presented certificate could not be parsed, or none was presented.
        public static let malformedCertificate = Code("malformed_certificate")
        /// Anything else OpenSSL refused (bad signature, a non-CA issuer, path length, name
        /// constraints, weak keys or signature algorithms, too many certificates); `detail`
        /// carries OpenSSL's reason.
        public static let invalidChain = Code("invalid_chain")
    }

    /// The stable reason.
    public let code: Code
    /// What happened, for people; no secrets (certificates are public).
    public let detail: String
    /// Position in the chain OpenSSL built (0 is the leaf) of the certificate at fault, when known.
    public let depth: Int?

    /// A failure with `code`, a human `detail`, and the depth of the certificate at fault.
    public init(_ code: Code, detail: String, depth: Int? = nil) {
        self.code = code
        self.detail = detail
        self.depth = depth
    }

    public static func == (lhs: TrustFailure, rhs: TrustFailure) -> Bool {
        lhs.code == rhs.code
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    public var description: String {
        "\(code.rawValue): \(detail)"
    }
}
