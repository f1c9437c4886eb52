public import Foundation

/// What a tenant's API key may do.
public enum APIKeyRole: String, StrictStringEnum {
    /// Opens sessions and forwards challenges.
    case client
    /// Manages the tenant: keys, policy, credentials, counters, decisions.
    case admin
}

/// An API key as it may be listed: everything but the secret, which is shown once at creation
/// and stored only as a hash.
public struct APIKey: Sendable, Hashable, Codable {
    public var id: UUID
    public var tenantID: UUID
    public var name: String
    public var role: APIKeyRole
    /// The public part of the key (`csk_` and its lookup id), enough to recognise it in a listing.
    public var prefix: String
    public var createdAt: Date
    public var revokedAt: Date?
    /// The one `clientId` a client key is bound to: it opens sessions under that one only, and
    /// reaches only that client's sessions and decisions. `nil`: a key a fleet shares, which may
    /// claim any.
    public var clientID: String?

    public init(id: UUID, tenantID: UUID, name: String, role: APIKeyRole, prefix: String, createdAt: Date, revokedAt: Date?, clientID: String? = nil) {
        self.id = id
        self.tenantID = tenantID
        self.name = name
        self.role = role
        self.prefix = prefix
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.clientID = clientID
    }

    public var isRevoked: Bool { revokedAt != nil }

    enum CodingKeys: String, CodingKey {
        case id, name, role, prefix, createdAt, revokedAt
        case tenantID = "tenantId"
        case clientID = "clientId"
    }
}
