/// A client's state for a security check in MobileFirst's terms: `attempting`, `success`,
/// `blocked`, and `expired` once the stored state's time is up. Open.
public struct SecurityCheckStateName: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static let attempting = Self(rawValue: "attempting")
    public static let success = Self(rawValue: "success")
    public static let blocked = Self(rawValue: "blocked")
    public static let expired = Self(rawValue: "expired")
}
