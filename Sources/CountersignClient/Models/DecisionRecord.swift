public import Foundation

/// A decision as the service recorded it (never with a secret).
public struct DecisionRecord: Codable, Hashable, Sendable {
    public var id: UUID
    public var sessionId: UUID
    public var clientId: String
    public var keyId: UUID
    public var taskId: String
    /// `challenge`, `response` (raw 401/407), `securityCheck`.
    public var kind: String
    public var protectionSpace: Space
    public var previousFailureCount: Int
    public var disposition: Disposition
    public var persistence: Persistence
    public var scope: DecisionScope
    public var source: DecisionSource
    public var reason: String
    public var rule: RuleReference?
    public var credentialId: UUID?
    public var blockedUntil: Date?
    public var createdAt: Date
    public var outcome: Outcome?
    public var outcomeStatus: Int?
    public var outcomeAt: Date?
    /// `report`, `retry`, `response` (a raw response forwarded to `answerRawResponse` showed it),
    /// `session`.
    public var outcomeSource: String?
    public var countedRejection: Bool

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, sessionId, clientId, keyId, taskId, kind, protectionSpace, previousFailureCount, disposition, persistence, scope
        case source, reason, rule, credentialId, blockedUntil, createdAt, outcome, outcomeStatus, outcomeAt, outcomeSource, countedRejection
    }

    /// The protection space as a record keeps it (and as a ``ResponseAnswer`` names it).
    public struct Space: Codable, Hashable, Sendable {
        public var host: String
        public var port: Int
        public var protocolName: String?
        public var realm: String?
        public var authenticationMethod: AuthenticationMethod
        public var isProxy: Bool

        public init(host: String, port: Int, protocolName: String? = nil, realm: String? = nil, authenticationMethod: AuthenticationMethod, isProxy: Bool = false) {
            self.host = host
            self.port = port
            self.protocolName = protocolName
            self.realm = realm
            self.authenticationMethod = authenticationMethod
            self.isProxy = isProxy
        }

        enum CodingKeys: String, CodingKey {
            case host, port, realm, authenticationMethod, isProxy
            case protocolName = "protocol"
        }

        public func encode(to encoder: any Encoder) throws {
            // Every member is present in the contract, null when empty.
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(host, forKey: .host)
            try container.encode(port, forKey: .port)
            try container.encode(protocolName, forKey: .protocolName)
            try container.encode(realm, forKey: .realm)
            try container.encode(authenticationMethod, forKey: .authenticationMethod)
            try container.encode(isProxy, forKey: .isProxy)
        }
    }
}
