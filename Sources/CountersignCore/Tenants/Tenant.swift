public import Foundation

/// One customer. Every other row belongs to exactly one tenant.
public struct Tenant: Sendable, Hashable, Codable {
    public var id: UUID
    public var name: String
    public var createdAt: Date
    /// Set when the operator disabled the tenant: its keys are refused from then on.
    public var disabledAt: Date?

    public init(id: UUID, name: String, createdAt: Date, disabledAt: Date?) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.disabledAt = disabledAt
    }

    public var isDisabled: Bool { disabledAt != nil }
}
