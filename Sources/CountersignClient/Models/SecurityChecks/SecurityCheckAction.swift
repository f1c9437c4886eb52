/// What to do with one security check: `submitChallengeAnswer` (the handler's
/// `submitChallengeAnswer(answer)`), `cancel` (its `cancel()`), or `unhandled` (the client's own
/// handler takes it). Open: values a later service adds decode as themselves.
public struct SecurityCheckAction: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static let submitChallengeAnswer = Self(rawValue: "submitChallengeAnswer")
    public static let cancel = Self(rawValue: "cancel")
    public static let unhandled = Self(rawValue: "unhandled")
}
