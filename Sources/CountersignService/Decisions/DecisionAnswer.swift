public import CountersignCore
public import Foundation

/// The answer to a challenge, as the client receives it.
public struct DecisionAnswer: Sendable, Encodable {
    public var decisionId: UUID
    public var disposition: Disposition
    /// With `useCredential`: what to answer with. The only place a secret ever leaves the service.
    public var credential: ReleasedCredential?
    public var persistence: Persistence
    public var scope: DecisionScope
    /// Rejections the credential may still take before it blocks.
    public var remainingAttempts: Int?
    public var blockedUntil: Date?
    public var rule: RuleReference?
    public var source: DecisionSource
    public var reason: String
    /// The earlier decision this challenge showed rejected (a retry naming its user), if any.
    public var countedRejection: UUID?
    /// With `useCredential` on a client-certificate challenge: the identity, as a PKCS#12 under
    /// a one-time passphrase. Encoded as `credential`.
    public var identity: ReleasedIdentity? = nil
    /// The server-trust evaluation behind the answer (server-trust challenges whose chain was
    /// evaluated or remembered trusted). Trusted with `useCredential`: it is also the
    /// `serverTrust` credential.
    public var trust: ServerTrustVerdict? = nil

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(decisionId, forKey: .decisionId)
        try container.encode(disposition, forKey: .disposition)
        if let credential {
            try container.encode(credential, forKey: .credential)
        } else if let identity {
            try container.encode(identity, forKey: .credential)
        } else if disposition == .useCredential, let trust, trust.trusted {
            try container.encode(ServerTrustCredential(evaluation: trust), forKey: .credential)
        } else {
            try container.encodeNil(forKey: .credential)
        }
        try container.encode(persistence, forKey: .persistence)
        try container.encode(scope, forKey: .scope)
        try container.encode(remainingAttempts, forKey: .remainingAttempts)
        try container.encode(blockedUntil, forKey: .blockedUntil)
        try container.encode(rule, forKey: .rule)
        try container.encode(source, forKey: .source)
        try container.encode(reason, forKey: .reason)
        try container.encode(countedRejection, forKey: .countedRejection)
        try container.encode(trust, forKey: .evaluation)
    }

    enum CodingKeys: String, CodingKey {
        case decisionId, disposition, credential, persistence, scope, remainingAttempts, blockedUntil, rule, source, reason, countedRejection
        case evaluation
    }
}

/// A released client identity: the key, the leaf and its chain in a PKCS#12 built for this
/// answer, protected by a passphrase made for it alone. The key never leaves in any other form.
public struct ReleasedIdentity: Sendable, Encodable {
    public var identityId: UUID
    public var subject: String
    public var issuer: String
    public var sha256Fingerprint: String
    public var notAfter: Date
    /// The PKCS#12 file, base64 (standard alphabet, padded).
    public var pkcs12: String
    /// The one-time passphrase that opens `pkcs12` (192 random bits, base64url).
    public var passphrase: String

    public init(identityId: UUID, subject: String, issuer: String, sha256Fingerprint: String, notAfter: Date, pkcs12: String, passphrase: String) {
        self.identityId = identityId
        self.subject = subject
        self.issuer = issuer
        self.sha256Fingerprint = sha256Fingerprint
        self.notAfter = notAfter
        self.pkcs12 = pkcs12
        self.passphrase = passphrase
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("clientIdentity", forKey: .kind)
        try container.encode(identityId, forKey: .identityId)
        try container.encode(subject, forKey: .subject)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(sha256Fingerprint, forKey: .sha256Fingerprint)
        try container.encode(notAfter, forKey: .notAfter)
        try container.encode("pkcs12", forKey: .format)
        try container.encode(pkcs12, forKey: .pkcs12)
        try container.encode(passphrase, forKey: .passphrase)
    }

    enum CodingKeys: String, CodingKey {
        case kind, identityId, subject, issuer, sha256Fingerprint, notAfter, format, pkcs12, passphrase
    }
}

// The PKCS#12 and its passphrase are a private key in transit: printing the value, on purpose
// or by interpolation into a log line, must show neither.
extension ReleasedIdentity: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "ReleasedIdentity(\(identityId), subject: \(subject), pkcs12: redacted, passphrase: redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["identityId": identityId, "subject": subject], displayStyle: .struct) }
}

/// The server-trust credential: "trust this chain" (URLCredential(trust:)), with the
/// evaluation that justified it.
struct ServerTrustCredential: Encodable {
    var evaluation: ServerTrustVerdict

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("serverTrust", forKey: .kind)
        try container.encode(evaluation, forKey: .evaluation)
    }

    enum CodingKeys: String, CodingKey { case kind, evaluation }
}

/// A released password credential.
public struct ReleasedCredential: Sendable, Encodable {
    public var kind: CredentialKind
    public var user: String
    public var password: String
    /// The NTLM account domain.
    public var domain: String?

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(user, forKey: .user)
        try container.encode(password, forKey: .password)
        try container.encode(domain, forKey: .domain)
    }

    enum CodingKeys: String, CodingKey {
        case kind, user, password, domain
    }
}

extension DecisionAnswer: JSONTextRepresentable {
    /// The same document `encode(to:)` produces through JSONEncoder with sorted keys, written
    /// directly: this is the response to every challenge.
    public var jsonText: String {
        var object = JSONObjectText()
        object.add("blockedUntil", blockedUntil.map(Timestamp.format))
        object.add("countedRejection", countedRejection?.text)
        object.add("credential", json: credentialJSONText)
        object.add("decisionId", decisionId.text)
        object.add("disposition", disposition.rawValue)
        object.add("evaluation", json: trust.flatMap(Self.encoded))
        object.add("persistence", persistence.rawValue)
        object.add("reason", reason)
        object.add("remainingAttempts", remainingAttempts)
        object.add("rule", json: rule.map { rule in
            var reference = JSONObjectText()
            reference.add("id", rule.id)
            if let name = rule.name { reference.add("name", name) }
            return reference.text
        })
        object.add("scope", scope.rawValue)
        object.add("source", source.rawValue)
        return object.text
    }
}

extension DecisionAnswer {
    /// `credential` as `encode(to:)` writes it: the password, the identity or the server trust.
    private var credentialJSONText: String? {
        if let credential { return credential.jsonText }
        if let identity { return Self.encoded(identity) }
        if disposition == .useCredential, let trust, trust.trusted { return Self.encoded(ServerTrustCredential(evaluation: trust)) }
        return nil
    }

    // TLS answers are rarer and carry nested objects: the API's encoder writes them.
    private static func encoded(_ value: some Encodable) -> String? {
        try? APIJSONEncoder().text(value)
    }
}

extension ReleasedCredential: JSONTextRepresentable {
    public var jsonText: String {
        var object = JSONObjectText()
        object.add("domain", domain)
        object.add("kind", kind.rawValue)
        object.add("password", password)
        object.add("user", user)
        return object.text
    }
}

// A released credential carries a password: printing one, on purpose or by string
// interpolation into a log line, must not show it.
extension ReleasedCredential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "ReleasedCredential(\(kind.rawValue), user: \(user), password: redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["kind": kind, "user": user, "password": "redacted"], displayStyle: .struct) }
}
