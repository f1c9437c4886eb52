/// Why a forwarded raw response got the answer it got, as a stable code to act on.
/// Open: codes a later service adds decode as themselves.
public struct ResponseReasonCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// `useCredential`: send the request again with ``ResponseAnswer/authorization``.
    public static let authorization = Self(rawValue: "authorization")
    /// `useCredential` after a Digest `stale=true`: only the nonce expired; send the new header.
    /// Not a rejection.
    public static let staleNonce = Self(rawValue: "stale_nonce")
    /// `useCredential` for NTLM, a connection handshake no single header answers: the credential
    /// itself is in ``ResponseAnswer/credential`` and the client runs the handshake.
    public static let ntlmHandshake = Self(rawValue: "ntlm_handshake")
    /// The credential is blocked after too many rejections.
    public static let credentialBlocked = Self(rawValue: "credential_blocked")
    /// A 403 followed the credential: the server took it and refuses anyway. Stop; retrying will
    /// not help, and nothing was counted against the credential.
    public static let serverRefused = Self(rawValue: "server_refused")
    /// A rule would release a credential, but none fits.
    public static let noCredential = Self(rawValue: "no_credential")
    /// No policy rule speaks about any answerable challenge.
    public static let noMatchingRule = Self(rawValue: "no_matching_rule")
    /// A rule (or the session's memory) answers another disposition than `useCredential`.
    public static let policy = Self(rawValue: "policy")
    /// No challenge is one Countersign answers (Negotiate, Bearer, unknown schemes or algorithms).
    public static let noSupportedChallenge = Self(rawValue: "no_supported_challenge")

    static let known: [Self] = [
        .authorization, .staleNonce, .ntlmHandshake, .credentialBlocked, .serverRefused, .noCredential, .noMatchingRule, .policy,
        .noSupportedChallenge,
    ]
}
