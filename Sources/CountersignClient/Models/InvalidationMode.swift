/// How a session ends, as URLSession's two ways of invalidating.
/// Open: values a later service adds decode as themselves.
public struct InvalidationMode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// Like `finishTasksAndInvalidate()`: new challenges are refused, pending outcomes may still
    /// be reported.
    public static let finishTasks = Self(rawValue: "finishTasks")
    /// Like `invalidateAndCancel()`: decisions without an outcome become `cancelled` at once.
    public static let cancel = Self(rawValue: "cancel")
}
