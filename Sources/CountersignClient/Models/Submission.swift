public import Foundation

/// The service's answer to a submitted credential.
public struct Submission: Codable, Hashable, Sendable {
    /// Whether it was stored anywhere (`none` stores nothing).
    public var stored: Bool
    public var persistence: Persistence
    public var credentialId: UUID?
    /// Stored as a new credential (else an existing one was updated, or nothing stored).
    public var created: Bool

    public init(stored: Bool, persistence: Persistence, credentialId: UUID? = nil, created: Bool) {
        self.stored = stored
        self.persistence = persistence
        self.credentialId = credentialId
        self.created = created
    }
}
