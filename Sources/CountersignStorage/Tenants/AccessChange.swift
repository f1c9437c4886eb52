import CountersignPostgres
public import Foundation

/// A change to who may call the service, announced to every instance (`pg_notify` on
/// ``channel``) by the transaction that makes it, so that instances which keep keys for a
/// while (`APIKeyAuthenticator`) forget them as soon as it commits rather than at the end of
/// their cache period.
public enum AccessChange: Sendable, Equatable {
    case keyRevoked(UUID)
    /// Disabled or enabled again: either way, what was known of its keys is out of date.
    case tenantSwitched(UUID)

    public static let channel = "countersign_access"

    var payload: String {
        switch self {
        case .keyRevoked(let id): "key \(id.uuidString.lowercased())"
        case .tenantSwitched(let id): "tenant \(id.uuidString.lowercased())"
        }
    }

    /// The change a notification on ``channel`` announces; `nil` for one this release does not
    /// know (sent by a newer instance), which the listener then ignores.
    public init?(payload: String) {
        let parts = payload.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, let id = UUID(uuidString: String(parts[1])) else { return nil }
        switch parts[0] {
        case "key": self = .keyRevoked(id)
        case "tenant": self = .tenantSwitched(id)
        default: return nil
        }
    }

    /// Queues the announcement in the connection's transaction: the server sends it at commit,
    /// and never if the transaction rolls back.
    func announce(on connection: PostgresConnection) throws {
        _ = try connection.query("SELECT pg_notify($1, $2)", [.text(Self.channel), .text(payload)])
    }
}
