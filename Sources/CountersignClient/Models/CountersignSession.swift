public import Foundation

/// A Countersign session: the service-side twin of one URLSession.
public struct CountersignSession: Codable, Hashable, Sendable {
    public var id: UUID
    public var tenantId: UUID
    public var clientId: String
    public var label: String?
    public var createdAt: Date
    public var expiresAt: Date
    public var invalidatedAt: Date?
    public var invalidationReason: InvalidationReason?
    public var invalidationMode: InvalidationMode?
    public var state: State

    public init(
        id: UUID,
        tenantId: UUID,
        clientId: String,
        label: String? = nil,
        createdAt: Date,
        expiresAt: Date,
        invalidatedAt: Date? = nil,
        invalidationReason: InvalidationReason? = nil,
        invalidationMode: InvalidationMode? = nil,
        state: State = .active
    ) {
        self.id = id
        self.tenantId = tenantId
        self.clientId = clientId
        self.label = label
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.invalidatedAt = invalidatedAt
        self.invalidationReason = invalidationReason
        self.invalidationMode = invalidationMode
        self.state = state
    }

    /// `active` or `invalidated`. Open: values a later service adds decode as themselves.
    public struct State: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
        public static let active = Self(rawValue: "active")
        public static let invalidated = Self(rawValue: "invalidated")
    }

    /// Why a session ended: `explicit` or `expired`. Open.
    public struct InvalidationReason: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
        public static let explicit = Self(rawValue: "explicit")
        public static let expired = Self(rawValue: "expired")
    }
}
