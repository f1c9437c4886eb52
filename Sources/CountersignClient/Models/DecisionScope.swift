/// Whether an answer holds for the task that asked or for the whole session (`task`, `session`).
/// Open: values a later service adds decode as themselves.
public struct DecisionScope: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static let task = Self(rawValue: "task")
    public static let session = Self(rawValue: "session")
}
