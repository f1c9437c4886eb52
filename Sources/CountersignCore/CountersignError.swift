/// The one error type every Countersign module reports to its callers.
///
/// `code` is stable and is what the API returns; `message` is safe to show to whoever
/// sent the request and never carries a secret. Equality is on `code` only, so tests
/// compare codes, not wording.
public struct CountersignError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The same error for a value checked on its own that arrived as the member `member` of a
    /// larger body: a message naming a field (`'taskId' ...`) names it by its path in the body.
    public func within(_ member: String) -> CountersignError {
        guard message.hasPrefix("'") else { return self }
        return CountersignError(code, "'\(member)." + message.dropFirst())
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension CountersignError {
    /// What kind of failure an error is. The HTTP layer maps each kind to one status.
    public enum Kind: Sendable, Hashable {
        case invalidInput
        case unauthenticated
        case forbidden
        case notFound
        case methodNotAllowed
        case conflict
        case payloadTooLarge
        case headersTooLarge
        case unsupportedMediaType
        case notImplemented
        case unavailable
        case internalFailure
    }

    /// A stable, machine-readable error code.
    ///
    /// A struct rather than an enum so that codes can be added without breaking callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public let kind: Kind

        public init(_ rawValue: String, kind: Kind) {
            self.rawValue = rawValue
            self.kind = kind
        }

        public var description: String { rawValue }

        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    }
}
