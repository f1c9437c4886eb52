/// The answer object of a security-check handler, filled from a stored credential.
///
/// A tiny, safe template: a string value that is exactly `$secret`, `$account` or `$domain` is
/// replaced, as a whole, by the credential's password, account or NTLM domain (`null` when it
/// has none); every other value is sent as written. There is no interpolation: a string that
/// contains `$` anywhere else is refused when the policy is saved, so `"pin-$secret"` can never
/// look as if it worked.
///
/// `{"pin": "$secret"}` answers PinCodeAttempts; `{"username": "$account", "password": "$secret"}`
/// answers a UserLogin check.
public struct SecurityCheckAnswerTemplate: Hashable, Sendable {
    public let members: [String: JSONValue]

    public init(_ members: [String: JSONValue]) {
        self.members = members
    }

    public enum Placeholder: String, CaseIterable, Sendable {
        case secret = "$secret"
        case account = "$account"
        case domain = "$domain"
    }

    static let maximumMembers = 32
    static let maximumDepth = 4
    static let maximumBytes = 4096

    func validate(field: String) throws {
        guard !members.isEmpty, members.count <= Self.maximumMembers else {
            throw CountersignError(.invalidPolicy, "\(field) must have 1 to \(Self.maximumMembers) members")
        }
        for key in members.keys.sorted() {
            guard !key.isEmpty, key.unicodeScalars.count <= 100, !Validation.containsControlCharacters(key) else {
                throw CountersignError(.invalidPolicy, "\(field): member names must be 1 to 100 characters, no control characters")
            }
        }
        let object = JSONValue.object(members)
        guard object.depth <= Self.maximumDepth, object.approximateSize <= Self.maximumBytes else {
            throw CountersignError(.invalidPolicy, "\(field) must be at most \(Self.maximumBytes) bytes and \(Self.maximumDepth) levels deep")
        }
        var used = Set<Placeholder>()
        try object.forEachString { text in
            guard text.contains("$") else { return }
            guard let placeholder = Placeholder(rawValue: text) else {
                throw CountersignError(
                    .invalidPolicy,
                    "\(field): '\(text)' is not a placeholder; a value is exactly $secret, $account or $domain, or contains no '$' (no interpolation)"
                )
            }
            used.insert(placeholder)
        }
        guard used.contains(.secret) || used.contains(.account) else {
            throw CountersignError(.invalidPolicy, "\(field) must use the credential: put \"$secret\" (or \"$account\") where the server expects it")
        }
    }

    /// Whether the answer carries the password.
    public var usesSecret: Bool {
        var uses = false
        JSONValue.object(members).forEachString { text in
            if text == Placeholder.secret.rawValue { uses = true }
        }
        return uses
    }

    /// The answer for a credential. Holds the secret: never log it.
    public func filled(secret: String, account: String, domain: String?) -> JSONValue {
        JSONValue.object(members).mapStrings { text in
            switch Placeholder(rawValue: text) {
            case .secret: .string(secret)
            case .account: .string(account)
            case .domain: domain.map(JSONValue.string) ?? .null
            case nil: .string(text)
            }
        }
    }
}
