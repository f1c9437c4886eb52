public import Foundation

/// The service-side twin of one URLSession.
public struct Session: Hashable, Sendable, Codable {
    public var id: UUID
    public var tenantID: UUID
    public var clientId: String
    public var label: String?
    public var createdAt: Date
    public var expiresAt: Date
    public var invalidatedAt: Date?
    public var invalidationReason: InvalidationReason?
    public var invalidationMode: InvalidationMode?

    public init(
        id: UUID,
        tenantID: UUID,
        clientId: String,
        label: String?,
        createdAt: Date,
        expiresAt: Date,
        invalidatedAt: Date?,
        invalidationReason: InvalidationReason?,
        invalidationMode: InvalidationMode?
    ) {
        self.id = id
        self.tenantID = tenantID
        self.clientId = clientId
        self.label = label
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.invalidatedAt = invalidatedAt
        self.invalidationReason = invalidationReason
        self.invalidationMode = invalidationMode
    }

    /// Whether new challenges are still answered at `now`.
    public func isActive(at now: Date) -> Bool {
        invalidatedAt == nil && expiresAt > now
    }

    /// The session as it stands at `now`: an expired session reads as invalidated by expiry
    /// even before the sweeper has recorded it.
    public func observed(at now: Date) -> Session {
        guard invalidatedAt == nil, expiresAt <= now else { return self }
        var session = self
        session.invalidatedAt = expiresAt
        session.invalidationReason = .expired
        session.invalidationMode = .finishTasks
        return session
    }

    enum CodingKeys: String, CodingKey {
        case id, clientId, label, createdAt, expiresAt, invalidatedAt, invalidationReason, invalidationMode, state
        case tenantID = "tenantId"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        tenantID = try container.decode(UUID.self, forKey: .tenantID)
        clientId = try container.decode(String.self, forKey: .clientId)
        label = try container.decodeIfPresent(String.self, forKey: .label)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        expiresAt = try container.decode(Date.self, forKey: .expiresAt)
        invalidatedAt = try container.decodeIfPresent(Date.self, forKey: .invalidatedAt)
        invalidationReason = try container.decodeIfPresent(InvalidationReason.self, forKey: .invalidationReason)
        invalidationMode = try container.decodeIfPresent(InvalidationMode.self, forKey: .invalidationMode)
    }

    /// Encodes every field, nulls included, and `state` (`active` or `invalidated`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(tenantID, forKey: .tenantID)
        try container.encode(clientId, forKey: .clientId)
        try container.encode(label, forKey: .label)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(invalidatedAt, forKey: .invalidatedAt)
        try container.encode(invalidationReason, forKey: .invalidationReason)
        try container.encode(invalidationMode, forKey: .invalidationMode)
        try container.encode(invalidatedAt == nil ? "active" : "invalidated", forKey: .state)
    }
}

/// How a session was invalidated, as URLSession's two ways.
public enum InvalidationMode: String, StrictStringEnum {
    /// `finishTasksAndInvalidate`: new challenges are refused; outcomes of decisions already
    /// made are still accepted.
    case finishTasks
    /// `invalidateAndCancel`: decisions still pending become `cancelled` at once.
    case cancel
}

public enum InvalidationReason: String, StrictStringEnum {
    case explicit
    case expired
}
