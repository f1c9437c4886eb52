/// How long a credential is kept (`URLCredential.Persistence`), and where the service remembers it.
public enum Persistence: String, Codable, Hashable, Sendable, CaseIterable, Comparable {
    /// This one challenge only.
    case none
    /// Remembered by the session until it ends.
    case forSession
    /// Remembered for the client across its sessions.
    case permanent
    /// Remembered for the whole tenant.
    case synchronizable

    private var rank: Int {
        switch self {
        case .none: 0
        case .forSession: 1
        case .permanent: 2
        case .synchronizable: 3
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}
