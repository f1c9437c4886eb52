/// A validated Digest challenge (RFC 7616 §3.3), built from a parsed ``AuthenticationChallenge``.
///
/// Building it is where the meaning is checked: the scheme is Digest, `realm` and `nonce` are
/// present, no parameter is repeated, the algorithm and at least one offered qop are implemented,
/// and `charset`, if sent, is UTF-8. Parameters it does not know are ignored, as RFC 7616 asks.
public struct DigestChallenge: Sendable, Hashable {
    /// `realm`: names the protection space; part of what the password is hashed with.
    public let realm: String
    /// `domain`: the URIs (absolute or absolute paths) the protection space covers; empty when
    /// the server did not say, which means the whole origin.
    public let domain: [String]
    /// `nonce`: the server's challenge value.
    public let nonce: String
    /// `opaque`: a value the client must echo unchanged, or `nil`.
    public let opaque: String?
    /// `stale`: the previous request was refused only because its nonce had expired, so the
    /// credential itself was good and should be retried with the new nonce (not counted as a
    /// rejection). RFC 7616 treats any value other than a case-insensitive `true` as false.
    public let isStale: Bool
    /// `algorithm`, MD5 when the server sent none.
    public let algorithm: DigestAlgorithm
    /// `algorithm` exactly as the server spelled it, or `nil` when absent. The answer echoes this
    /// spelling, because some servers compare it case-sensitively.
    public let algorithmName: String?
    /// The implemented qop values the server offers, in its order; values Countersign does not
    /// implement are left out. Empty when the challenge has no `qop` at all: RFC 2069 mode.
    public let qopOptions: [DigestQop]
    /// `charset=UTF-8`: the server expects user name and password in Unicode NFC, in UTF-8
    /// (the only encoding Countersign sends anyway; `DigestResponder` normalizes them).
    public let isCharsetUTF8: Bool
    /// `userhash=true`: the server wants `H(user:realm)` instead of the user name.
    public let userhash: Bool

    /// Validates `challenge` as a Digest challenge.
    ///
    /// - Throws:
    ///   - `invalid_challenge_parameter` when the scheme is not Digest, the challenge is a
    ///     token68, `charset` is not UTF-8, or a `-sess` algorithm comes without `qop`;
    ///   - `duplicate_parameter` when a parameter is repeated;
    ///   - `missing_challenge_parameter` when `realm` or `nonce` is absent;
    ///   - `unsupported_digest_algorithm` for an unknown `algorithm`;
    ///   - `unsupported_digest_qop` when `qop` is present but offers nothing implemented.
    public init(_ challenge: AuthenticationChallenge) throws(CountersignError) {
        guard challenge.scheme == .digest else {
            throw CountersignError(.invalidChallengeParameter, "not a Digest challenge")
        }
        guard challenge.token68 == nil else {
            throw CountersignError(.invalidChallengeParameter, "a Digest challenge carries auth-params, not a token68")
        }
        if let duplicate = challenge.duplicateParameterName {
            throw CountersignError(.duplicateParameter, "Digest challenge repeats the parameter '\(duplicate)'")
        }
        guard let realm = challenge.parameter("realm") else {
            throw CountersignError(.missingChallengeParameter, "Digest challenge without realm")
        }
        guard let nonce = challenge.parameter("nonce") else {
            throw CountersignError(.missingChallengeParameter, "Digest challenge without nonce")
        }

        let algorithmName = challenge.parameter("algorithm")
        let algorithm: DigestAlgorithm
        if let algorithmName {
            guard let known = DigestAlgorithm(name: algorithmName) else {
                throw CountersignError(
                    .unsupportedDigestAlgorithm,
                    "Digest algorithm '\(Self.printable(algorithmName))' is not supported"
                )
            }
            algorithm = known
        } else {
            algorithm = .md5
        }

        var qopOptions: [DigestQop] = []
        if let qop = challenge.parameter("qop") {
            for option in Self.split(
                qop, separators: [AuthenticationSyntax.comma, AuthenticationSyntax.space, AuthenticationSyntax.horizontalTab])
            {
                let folded = AuthenticationSyntax.lowercasedASCII(option)
                if let known = DigestQop(rawValue: folded), !qopOptions.contains(known) {
                    qopOptions.append(known)
                }
            }
            guard !qopOptions.isEmpty else {
                throw CountersignError(
                    .unsupportedDigestQop,
                    "Digest qop '\(Self.printable(qop))' offers neither auth nor auth-int"
                )
            }
        }
        // RFC 2617 §3.2.2: without qop no cnonce is sent, yet -sess hashes one into A1.
        guard !(algorithm.isSession && qopOptions.isEmpty) else {
            throw CountersignError(.invalidChallengeParameter, "Digest \(algorithm.name) needs a qop")
        }

        var isCharsetUTF8 = false
        if let charset = challenge.parameter("charset") {
            guard AuthenticationSyntax.equalsIgnoringASCIICase(charset, "UTF-8") else {
                throw CountersignError(.invalidChallengeParameter, "Digest charset must be UTF-8")
            }
            isCharsetUTF8 = true
        }

        self.realm = realm
        self.domain = Self.split(
            challenge.parameter("domain") ?? "", separators: [AuthenticationSyntax.space, AuthenticationSyntax.horizontalTab])
        self.nonce = nonce
        self.opaque = challenge.parameter("opaque")
        self.isStale = challenge.parameter("stale").map { AuthenticationSyntax.equalsIgnoringASCIICase($0, "true") } ?? false
        self.algorithm = algorithm
        self.algorithmName = algorithmName
        self.qopOptions = qopOptions
        self.isCharsetUTF8 = isCharsetUTF8
        self.userhash = challenge.parameter("userhash").map { AuthenticationSyntax.equalsIgnoringASCIICase($0, "true") } ?? false
    }

    /// Splits at any of `separators`, dropping empty pieces; ASCII separators never split a
    /// multi-byte UTF-8 sequence, so the pieces are valid strings.
    private static func split(_ value: String, separators: Set<UInt8>) -> [String] {
        value.utf8.split(whereSeparator: separators.contains).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Server-chosen text safe for an error message: short, and only printable ASCII.
    private static func printable(_ value: String) -> String {
        let visible = value.utf8.prefix(32).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }
        return String(decoding: visible, as: UTF8.self) + (value.utf8.count > 32 ? "..." : "")
    }
}
