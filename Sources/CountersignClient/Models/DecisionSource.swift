/// What a decision came from: the session's memory, a policy rule, no rule at all, or a method
/// the service does not answer. Open: values a later service adds decode as themselves.
public struct DecisionSource: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static let session = Self(rawValue: "session")
    public static let policy = Self(rawValue: "policy")
    public static let noMatchingRule = Self(rawValue: "noMatchingRule")
    public static let unsupportedMethod = Self(rawValue: "unsupportedMethod")
    /// The upstream server's response decided: a 403 after a released credential (raw responses).
    public static let serverResponse = Self(rawValue: "serverResponse")
}
