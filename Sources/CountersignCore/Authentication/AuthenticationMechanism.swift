/// What Countersign can answer a challenge with: a scheme, and for Digest its hash function.
/// A preference list of these ranks challenges from strongest to weakest.
///
/// Digest `-sess` variants rank with their base hash: they change how the secret is derived per
/// session, not the strength of the hash.
public enum AuthenticationMechanism: Sendable, Hashable, CustomStringConvertible {
    /// Digest (RFC 7616) with the given hash, plain or `-sess`.
    case digest(DigestHashAlgorithm)
    /// NTLM, answered in its own handshake outside this module.
    case ntlm
    /// Negotiate (SPNEGO). Not in the default preference: Countersign has no Kerberos tickets.
    case negotiate
    /// Basic (RFC 7617): the password itself travels, only base64-encoded.
    case basic
    /// Bearer (RFC 6750). Not in the default preference: tokens are not credentials Countersign holds.
    case bearer

    /// Digest SHA-512-256, Digest SHA-256, Digest MD5, NTLM, Basic: strongest first. Negotiate,
    /// Bearer and unknown schemes are reported but never answered.
    public static let defaultPreference: [Self] = [.digest(.sha512_256), .digest(.sha256), .digest(.md5), .ntlm, .basic]

    /// The scheme this mechanism answers.
    public var scheme: AuthenticationScheme {
        switch self {
        case .digest: .digest
        case .ntlm: .ntlm
        case .negotiate: .negotiate
        case .basic: .basic
        case .bearer: .bearer
        }
    }

    /// Such as `Digest SHA-256` or `Basic`.
    public var description: String {
        switch self {
        case .digest(let hash): "Digest \(hash.name)"
        default: scheme.name
        }
    }
}
