/// One rule: which challenges it speaks about (`match`) and what it answers (`then`).
public struct PolicyRule: Codable, Hashable, Sendable {
    /// Stable id chosen by the admin; decisions record it.
    public var id: String
    public var name: String?
    public var match: RuleMatch
    public var then: RuleAction

    public init(id: String, name: String? = nil, match: RuleMatch, then: RuleAction) {
        self.id = id
        self.name = name
        self.match = match
        self.then = then
    }

    func validate(field: String) throws {
        guard !id.isEmpty, id.utf8.count <= 100, id.utf8.allSatisfy({ Self.idCharacters.contains($0) }) else {
            throw CountersignError(.invalidPolicy, "\(field).id must be 1 to 100 of a-z A-Z 0-9 . _ -")
        }
        if let name { try Validation.name(name, field: "\(field).name") }
        try match.validate(field: "\(field).match")
        try then.validate(field: "\(field).then")
    }

    private static let idCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-".utf8)
}

/// Which challenges a rule speaks about. Every field given must fit; a field left out fits
/// anything.
public struct RuleMatch: Codable, Hashable, Sendable {
    public var host: HostPattern?
    public var port: Int?
    /// `protocol` in JSON.
    public var protocolName: String?
    public var realm: String?
    public var methods: [AuthenticationMethod]?
    /// `true`: proxies only; `false`: origin servers only; absent: both.
    public var isProxy: Bool?

    public init(
        host: HostPattern? = nil,
        port: Int? = nil,
        protocolName: String? = nil,
        realm: String? = nil,
        methods: [AuthenticationMethod]? = nil,
        isProxy: Bool? = nil
    ) {
        self.host = host
        self.port = port
        self.protocolName = protocolName
        self.realm = realm
        self.methods = methods
        self.isProxy = isProxy
    }

    enum CodingKeys: String, CodingKey {
        case host, port, realm, methods, isProxy
        case protocolName = "protocol"
    }

    /// `space` must be normalized.
    public func matches(_ space: ProtectionSpace) -> Bool {
        matches(space, host: HostPattern.Subject(folded: space.host))
    }

    /// `space` must be normalized, and `subject` its host.
    func matches(_ space: ProtectionSpace, host subject: HostPattern.Subject) -> Bool {
        if let host, !host.matches(subject) { return false }
        // Apple's port 0 is the protocol's default port to a rule as to a credential
        // (`CredentialAttributes.normalized`): `{"protocol": "https", "port": 0}` is port 443.
        if let port, ProtectionSpace.effectivePort(port, scheme: protocolName?.lowercasedIfNeeded) != space.port { return false }
        if let protocolName, protocolName.lowercasedIfNeeded != space.protocolName { return false }
        // No realm is the empty realm, as in the space's key (session memory, counters).
        if let realm, realm != space.realm ?? "" { return false }
        if let methods, !methods.contains(where: { $0.normalized(forProtocol: space.protocolName) == space.method }) { return false }
        if let isProxy, isProxy != space.isProxy { return false }
        return true
    }

    func validate(field: String) throws {
        if let port { try Validation.range(port, 0...65535, field: "\(field).port") }
        if let protocolName { try Validation.name(protocolName, field: "\(field).protocol", maxLength: 32) }
        if let realm { try Validation.text(realm, field: "\(field).realm", maxLength: 1000) }
        if let methods {
            guard !methods.isEmpty else { throw CountersignError(.invalidPolicy, "\(field).methods must not be empty; leave it out to match every method") }
            for method in methods where !method.isKnown {
                throw CountersignError(.invalidPolicy, "\(field).methods: '\(method)' is not an authentication method")
            }
            guard Set(methods).count == methods.count else {
                throw CountersignError(.invalidPolicy, "\(field).methods lists a method twice")
            }
        }
    }
}
