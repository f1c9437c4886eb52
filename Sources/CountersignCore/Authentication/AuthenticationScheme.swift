/// An HTTP authentication scheme (RFC 9110 §11.1), compared case-insensitively.
///
/// Build one from a received name with ``init(name:)``: it folds case, so `"DIGEST"` becomes
/// ``digest`` and `"NewAuth"` becomes `.other("newauth")`. Equality folds case too, so even a
/// hand-written `.other("Basic")` equals ``basic``.
public enum AuthenticationScheme: Sendable, Hashable, CustomStringConvertible {
    /// RFC 7617.
    case basic
    /// RFC 7616.
    case digest
    /// Microsoft NTLM (connection-based, answered elsewhere in several round trips).
    case ntlm
    /// RFC 4559 SPNEGO (Kerberos); Countersign reports it but cannot answer it.
    case negotiate
    /// RFC 6750 OAuth bearer tokens.
    case bearer
    /// Any other scheme, by its name in lowercase.
    case other(String)

    /// The scheme called `name`, whatever its case.
    public init(name: String) {
        let folded = AuthenticationSyntax.lowercasedASCII(name)
        switch folded {
        case "basic": self = .basic
        case "digest": self = .digest
        case "ntlm": self = .ntlm
        case "negotiate": self = .negotiate
        case "bearer": self = .bearer
        default: self = .other(folded)
        }
    }

    /// The conventional spelling of the scheme (`Basic`, `Digest`, `NTLM`, `Negotiate`, `Bearer`),
    /// or the lowercase name of another scheme.
    public var name: String {
        switch self {
        case .basic: "Basic"
        case .digest: "Digest"
        case .ntlm: "NTLM"
        case .negotiate: "Negotiate"
        case .bearer: "Bearer"
        case .other(let name): AuthenticationSyntax.lowercasedASCII(name)
        }
    }

    public var description: String { name }

    /// `.other` spelled like a known scheme is that scheme; anything else is as it is.
    private var canonical: Self {
        if case .other(let name) = self { Self(name: name) } else { self }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs.canonical, rhs.canonical) {
        case (.basic, .basic), (.digest, .digest), (.ntlm, .ntlm), (.negotiate, .negotiate), (.bearer, .bearer):
            true
        case (.other(let a), .other(let b)):
            a == b
        default:
            false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(canonical.name)
    }
}
