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

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(decisionId, forKey: .decisionId)
        try container.encode(disposition, forKey: .disposition)
        try container.encode(credential, forKey: .credential)
        try container.encode(persistence, forKey: .persistence)
        try container.encode(scope, forKey: .scope)
        try container.encode(remainingAttempts, forKey: .remainingAttempts)
        try container.encode(blockedUntil, forKey: .blockedUntil)
        try container.encode(rule, forKey: .rule)
        try container.encode(source, forKey: .source)
        try container.encode(reason, forKey: .reason)
        try container.encode(countedRejection, forKey: .countedRejection)
    }

    enum CodingKeys: String, CodingKey {
        case decisionId, disposition, credential, persistence, scope, remainingAttempts, blockedUntil, rule, source, reason, countedRejection
    }
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
        object.add("blockedUntil", blockedUntil.map { $0.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) })
        object.add("countedRejection", countedRejection?.uuidString)
        object.add("credential", json: credential?.jsonText)
        object.add("decisionId", decisionId.uuidString)
        object.add("disposition", disposition.rawValue)
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
extension ReleasedCredential: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "ReleasedCredential(\(kind.rawValue), user: \(user), password: redacted)" }
    public var debugDescription: String { description }
}
