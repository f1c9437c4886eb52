/// One `auth-param` of a challenge (RFC 9110 §11.2): a case-insensitive name and its value.
///
/// The value is the unquoted text: a `token` as sent, or a `quoted-string` with its quotes
/// removed and its backslash escapes resolved. Whether the server quoted it is not kept, because
/// RFC 9110 §11.2 requires recipients to treat both forms alike.
public struct AuthenticationParameter: Sendable, Hashable, CustomStringConvertible {
    /// The parameter name, lowercased (names are tokens, so this is ASCII case folding).
    public let name: String
    /// The parameter value, unquoted and unescaped.
    public let value: String

    /// A parameter to build a challenge with.
    ///
    /// - Throws: `malformed_challenge` when `name` is not a token or `value` holds a control
    ///   character other than HTAB, since neither could be written in a header.
    public init(name: String, value: String) throws(CountersignError) {
        guard AuthenticationSyntax.isToken(name) else {
            throw CountersignError(.malformedChallenge, "an auth-param name must be a token")
        }
        guard AuthenticationSyntax.isQuotable(value) else {
            throw CountersignError(.malformedChallenge, "an auth-param value must not contain control characters")
        }
        self.init(uncheckedName: AuthenticationSyntax.lowercasedASCII(name), value: value)
    }

    /// For the parser, which has already checked the grammar and folded the name.
    init(uncheckedName name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `name="value"`, as the serializer writes it.
    public var description: String { "\(name)=\(AuthenticationSyntax.quoted(value))" }
}
