/// One challenge of a `WWW-Authenticate` or `Proxy-Authenticate` field (RFC 9110 §11.2):
/// a scheme, then either auth-params or a token68, or nothing.
///
/// A value of this type always has valid syntax (its scheme is a token, its parameter names are
/// tokens, its values carry no control characters, its token68 is a token68), so
/// ``headerValue`` always writes a field value that parses back to an equal challenge.
/// It may still break a rule of meaning: see ``duplicateParameterName``.
public struct AuthenticationChallenge: Sendable, Hashable, CustomStringConvertible {
    /// The scheme name exactly as the server spelled it.
    public let schemeName: String
    /// The scheme, for case-insensitive comparison.
    public let scheme: AuthenticationScheme
    /// The auth-params in the order the server sent them, duplicates included. Empty when the
    /// challenge carries a token68 or nothing at all.
    public let parameters: [AuthenticationParameter]
    /// The token68 (as in `Negotiate YIIG...==`), or `nil` when the challenge has parameters or
    /// nothing after its scheme.
    public let token68: String?
    /// The first parameter name that occurs more than once, if any.
    ///
    /// RFC 9110 §11.2 says each name MUST occur only once per challenge. The parser keeps such a
    /// challenge so that the others in the same field stay usable and the report can name it;
    /// Countersign never answers it (``AuthenticationChallengeSelector`` reports it as
    /// `malformed(duplicate_parameter)`, and ``DigestChallenge`` refuses it), because a server and
    /// an intermediary could each act on a different one of the two values.
    public let duplicateParameterName: String?

    /// A challenge with auth-params (or nothing, when `parameters` is empty).
    ///
    /// - Throws: `malformed_challenge` when `scheme` is not a token.
    public init(scheme: String, parameters: [AuthenticationParameter] = []) throws(CountersignError) {
        guard AuthenticationSyntax.isToken(scheme) else {
            throw CountersignError(.malformedChallenge, "an auth-scheme must be a token")
        }
        self.init(uncheckedScheme: scheme, parameters: parameters, token68: nil)
    }

    /// A challenge with a token68.
    ///
    /// - Throws: `malformed_challenge` when `scheme` is not a token or `token68` not a token68.
    public init(scheme: String, token68: String) throws(CountersignError) {
        guard AuthenticationSyntax.isToken(scheme) else {
            throw CountersignError(.malformedChallenge, "an auth-scheme must be a token")
        }
        guard AuthenticationSyntax.isToken68(token68) else {
            throw CountersignError(.malformedChallenge, "not a token68")
        }
        self.init(uncheckedScheme: scheme, parameters: [], token68: token68)
    }

    /// For the parser, which has already checked the grammar.
    init(uncheckedScheme scheme: String, parameters: [AuthenticationParameter], token68: String?) {
        self.schemeName = scheme
        self.scheme = AuthenticationScheme(name: scheme)
        self.parameters = parameters
        self.token68 = token68
        self.duplicateParameterName = Self.firstDuplicateName(in: parameters)
    }

    /// The value of the first parameter called `name` (compared case-insensitively), or `nil`.
    public func parameter(_ name: String) -> String? {
        parameters.first { AuthenticationSyntax.equalsIgnoringASCIICase($0.name, name) }?.value
    }

    /// The `realm` parameter, if present.
    public var realm: String? { parameter("realm") }

    /// The challenge as a field value, such as `Digest realm="x", nonce="y"` or `Negotiate abc==`.
    ///
    /// Every parameter value is written as a quoted-string: RFC 9110 §11.2 lets a sender use
    /// either form and requires recipients to accept both, and quoting never needs a case split.
    public var headerValue: String {
        if let token68 {
            return "\(schemeName) \(token68)"
        }
        guard !parameters.isEmpty else { return schemeName }
        return schemeName + " " + parameters.map(\.description).joined(separator: ", ")
    }

    /// Several challenges as one field value, separated by commas (RFC 9110 §5.6.1).
    public static func headerValue(_ challenges: [AuthenticationChallenge]) -> String {
        challenges.map(\.headerValue).joined(separator: ", ")
    }

    public var description: String { headerValue }

    /// Equality folds the case of the scheme name, as HTTP does; parameter names are folded
    /// already and values and token68 are compared exactly.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.scheme == rhs.scheme && lhs.parameters == rhs.parameters && lhs.token68 == rhs.token68
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(scheme)
        hasher.combine(parameters)
        hasher.combine(token68)
    }

    private static func firstDuplicateName(in parameters: [AuthenticationParameter]) -> String? {
        // A Set keeps this linear even at the parser's parameter limit.
        guard parameters.count > 1 else { return nil }
        var seen = Set<String>(minimumCapacity: parameters.count)
        for parameter in parameters where !seen.insert(parameter.name).inserted {
            return parameter.name
        }
        return nil
    }
}
