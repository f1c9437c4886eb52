/// Apple's four answers to a challenge (`URLSession.AuthChallengeDisposition`).
public enum Disposition: String, StrictStringEnum {
    case useCredential
    case performDefaultHandling
    case cancelAuthenticationChallenge
    case rejectProtectionSpace
}

/// How long the client should keep a credential it was given (`URLCredential.Persistence`),
/// and where Countersign remembers it.
public enum Persistence: String, StrictStringEnum, Comparable {
    /// This one challenge only; remembered nowhere.
    case none
    /// Remembered by the session until it ends.
    case forSession
    /// Remembered centrally for the client across its sessions.
    case permanent
    /// Remembered centrally for the whole tenant.
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

/// Whether an answer holds for the task that asked or for the whole session.
public enum DecisionScope: String, StrictStringEnum {
    case task
    case session
}
