public import Foundation

/// The rejections a credential takes before it blocks, and how long its blocks last.
public typealias RejectionLimits = (maxFailures: Int, schedule: BlockSchedule)

/// A tenant's policy: settings and the ordered rules. The first rule whose `match` fits a
/// challenge decides it; with none, the answer is `performDefaultHandling`. Security checks
/// (MobileFirst-style app challenges) are answered by the handler named after them.
public struct Policy: Codable, Hashable, Sendable {
    public var settings: PolicySettings
    public var rules: [PolicyRule]
    /// One handler per security-check name.
    public var securityChecks: [SecurityCheckHandler]

    public init(settings: PolicySettings = .init(), rules: [PolicyRule] = [], securityChecks: [SecurityCheckHandler] = []) {
        self.settings = settings
        self.rules = rules
        self.securityChecks = securityChecks
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        settings = try container.decodeIfPresent(PolicySettings.self, forKey: .settings) ?? .init()
        rules = try container.decode([PolicyRule].self, forKey: .rules)
        securityChecks = try container.decodeIfPresent([SecurityCheckHandler].self, forKey: .securityChecks) ?? []
    }

    /// The policy of a tenant that never set one.
    public static let empty = Policy()

    public static let maximumRules = 1000
    public static let maximumSecurityChecks = 100

    /// The first rule that speaks about `space`.
    public func rule(for space: ProtectionSpace) -> PolicyRule? {
        let space = space.normalized
        let host = HostPattern.Subject(folded: space.host)
        return rules.first { $0.match.matches(space, host: host) }
    }

    /// The limit a rejection of `credential` in `space` counts against now, and the blocks it
    /// sets: those of the rule that now speaks about the space, when it would release that
    /// credential. An admin's change holds at once, for answers already given and for credentials
    /// a session remembered or a client submitted. `nil` when no rule would release it there any
    /// more: the caller keeps the limit the answer was given with (another credential's rule
    /// must not block this one).
    public func rejectionLimits(for space: ProtectionSpace, releasing credential: (id: UUID, account: String)) -> RejectionLimits? {
        guard let rule = rule(for: space), rule.then.disposition == .useCredential else { return nil }
        if let id = rule.then.credentialId, id.lowercased() != credential.id.text { return nil }
        if let account = rule.then.account, account != credential.account { return nil }
        return (rule.then.failureLimit, rule.then.blockSchedule)
    }

    /// `rejectionLimits(for:releasing:)` of a security check's answer: its handler's, while it
    /// answers with that credential.
    public func rejectionLimits(forSecurityCheck name: String, releasing credentialID: UUID) -> RejectionLimits? {
        guard let handler = securityCheckHandler(named: name), handler.action == .submitChallengeAnswer,
            handler.credentialId?.lowercased() == credentialID.text
        else { return nil }
        return (handler.limits.maxFailures, handler.limits.blockSchedule)
    }

    /// The handler of the security check `name`.
    public func securityCheckHandler(named name: String) -> SecurityCheckHandler? {
        securityChecks.first { $0.securityCheck == name }
    }

    /// Checks what JSON decoding cannot: counts, ranges, duplicate ids and security-check
    /// names, and that every credential a rule or handler names exists (`credentialExists`).
    public func validate(credentialExists: (CredentialReference) -> Bool) throws {
        guard rules.count <= Self.maximumRules else {
            throw CountersignError(.invalidPolicy, "a policy has at most \(Self.maximumRules) rules")
        }
        try settings.validate()
        var ids = Set<String>()
        for (index, rule) in rules.enumerated() {
            let field = "rules[\(index)]"
            try rule.validate(field: field)
            guard ids.insert(rule.id).inserted else {
                throw CountersignError(.invalidPolicy, "\(field).id '\(rule.id)' is used by an earlier rule")
            }
            for reference in rule.then.references where !credentialExists(reference) {
                throw CountersignError(.unknownCredentialReference, "\(field).then names \(reference), which is no credential of this tenant's own (a rule names admin and synchronizable credentials; a client's permanent one serves that client alone)")
            }
        }
        try validateSecurityChecks(credentialExists: credentialExists)
    }

    private func validateSecurityChecks(credentialExists: (CredentialReference) -> Bool) throws {
        guard securityChecks.count <= Self.maximumSecurityChecks else {
            throw CountersignError(.invalidPolicy, "a policy has at most \(Self.maximumSecurityChecks) security-check handlers")
        }
        var names = Set<String>()
        for (index, handler) in securityChecks.enumerated() {
            let field = "securityChecks[\(index)]"
            try handler.validate(field: field)
            guard names.insert(handler.securityCheck).inserted else {
                throw CountersignError(.invalidPolicy, "\(field).securityCheck '\(handler.securityCheck)' has an earlier handler")
            }
            for reference in handler.references where !credentialExists(reference) {
                throw CountersignError(.unknownCredentialReference, "\(field) names \(reference), which is no credential of this tenant's own (a handler names admin and synchronizable credentials; a client's permanent one serves that client alone)")
            }
        }
    }
}

/// Something a rule refers to by id, checked to exist when the policy is saved.
public enum CredentialReference: Hashable, Sendable, CustomStringConvertible {
    case credential(UUIDString)
    case identity(UUIDString)

    public var description: String {
        switch self {
        case .credential(let id): "credential \(id)"
        case .identity(let id): "identity \(id)"
        }
    }
}

/// A lowercase UUID string; the core keeps ids as text so that it needs no Foundation.
public typealias UUIDString = String

/// Tenant-wide settings carried by the policy.
public struct PolicySettings: Codable, Hashable, Sendable {
    /// Session lifetime when the client asks for none (default 3600 s).
    public var defaultSessionTTLSeconds: Int?
    /// Longest session a client may ask for (default 86400 s).
    public var maxSessionTTLSeconds: Int?
    /// Which challenge of a raw 401/407 to answer when several could be, strongest first
    /// (default ``AuthenticationMechanism/defaultPreference``). A mechanism left out is never
    /// answered from a raw response.
    public var preferredSchemes: [AuthenticationMechanism]?

    public init(defaultSessionTTLSeconds: Int? = nil, maxSessionTTLSeconds: Int? = nil, preferredSchemes: [AuthenticationMechanism]? = nil) {
        self.defaultSessionTTLSeconds = defaultSessionTTLSeconds
        self.maxSessionTTLSeconds = maxSessionTTLSeconds
        self.preferredSchemes = preferredSchemes
    }

    public var sessionTTLMaximum: Int { maxSessionTTLSeconds ?? 86_400 }
    public var sessionTTLDefault: Int { min(defaultSessionTTLSeconds ?? 3_600, sessionTTLMaximum) }
    public var schemePreference: [AuthenticationMechanism] { preferredSchemes ?? AuthenticationMechanism.defaultPreference }

    func validate() throws {
        if let value = defaultSessionTTLSeconds { try Validation.range(value, 1...31_536_000, field: "settings.defaultSessionTTLSeconds") }
        if let value = maxSessionTTLSeconds { try Validation.range(value, 1...31_536_000, field: "settings.maxSessionTTLSeconds") }
        // A default above the maximum would silently be cut to the maximum.
        if let value = defaultSessionTTLSeconds, value > sessionTTLMaximum {
            throw CountersignError(
                .invalidPolicy,
                "settings.defaultSessionTTLSeconds (\(value)) is above settings.maxSessionTTLSeconds (\(sessionTTLMaximum)\(maxSessionTTLSeconds == nil ? ", the default" : ""))"
            )
        }
        if let preferredSchemes {
            guard !preferredSchemes.isEmpty else {
                throw CountersignError(.invalidPolicy, "settings.preferredSchemes must not be empty; leave it out for the default order")
            }
            guard Set(preferredSchemes).count == preferredSchemes.count else {
                throw CountersignError(.invalidPolicy, "settings.preferredSchemes names a scheme twice")
            }
            for mechanism in preferredSchemes where !AuthenticationMechanism.answerable.contains(mechanism) {
                throw CountersignError(.invalidPolicy, "settings.preferredSchemes: \(mechanism) is reported, never answered")
            }
        }
    }
}
