/// What happened after a decision: `accepted`, `rejected`, `cancelled`, `refused`.
/// Open: values a later service adds decode as themselves.
public struct Outcome: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// The upstream server took the credential; the rejection count resets.
    public static let accepted = Self(rawValue: "accepted")
    /// The upstream server refused the credential; it counts one rejection.
    public static let rejected = Self(rawValue: "rejected")
    /// The credential was never judged (the request was cancelled or failed first).
    public static let cancelled = Self(rawValue: "cancelled")
    /// The server took the credential and refused the request anyway (403); not counted. The
    /// service records a `rejected` report with upstream status 403 as this.
    public static let refused = Self(rawValue: "refused")
}
