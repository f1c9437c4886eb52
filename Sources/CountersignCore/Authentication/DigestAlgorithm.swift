/// The value of a Digest challenge's `algorithm` parameter (RFC 7616 §3.3): a hash function,
/// plain or in its `-sess` variant.
///
/// `-sess` variants hash the password-derived secret once more with the nonce and cnonce; they
/// are no stronger or weaker than their base for choosing between challenges.
public struct DigestAlgorithm: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The hash function.
    public let hashAlgorithm: DigestHashAlgorithm
    /// Whether this is the `-sess` variant.
    public let isSession: Bool

    /// An algorithm from its parts.
    public init(hashAlgorithm: DigestHashAlgorithm, isSession: Bool) {
        self.hashAlgorithm = hashAlgorithm
        self.isSession = isSession
    }

    /// The algorithm an `algorithm=` value names, compared case-insensitively, or `nil` for one
    /// Countersign does not implement.
    public init?(name: String) {
        guard let algorithm = Self.allCases.first(where: { AuthenticationSyntax.equalsIgnoringASCIICase($0.name, name) }) else {
            return nil
        }
        self = algorithm
    }

    public static let md5 = Self(hashAlgorithm: .md5, isSession: false)
    public static let md5Session = Self(hashAlgorithm: .md5, isSession: true)
    public static let sha256 = Self(hashAlgorithm: .sha256, isSession: false)
    public static let sha256Session = Self(hashAlgorithm: .sha256, isSession: true)
    public static let sha512_256 = Self(hashAlgorithm: .sha512_256, isSession: false)
    public static let sha512_256Session = Self(hashAlgorithm: .sha512_256, isSession: true)

    public static let allCases: [Self] = [.md5, .md5Session, .sha256, .sha256Session, .sha512_256, .sha512_256Session]

    /// The name as RFC 7616 spells it, such as `SHA-256-sess`.
    public var name: String {
        isSession ? hashAlgorithm.name + "-sess" : hashAlgorithm.name
    }

    public var description: String { name }
}
