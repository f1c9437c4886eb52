public import Foundation

extension String: PostgresDecodable {
    public init?(postgresText text: String) {
        self = text
    }
}

extension Int: PostgresDecodable {
    public init?(postgresText text: String) {
        self.init(text)
    }
}

extension Int64: PostgresDecodable {
    public init?(postgresText text: String) {
        self.init(text)
    }
}

extension Int32: PostgresDecodable {
    public init?(postgresText text: String) {
        self.init(text)
    }
}

extension Int16: PostgresDecodable {
    public init?(postgresText text: String) {
        self.init(text)
    }
}

extension Bool: PostgresDecodable {
    public init?(postgresText text: String) {
        switch text {
        case "t", "true": self = true
        case "f", "false": self = false
        default: return nil
        }
    }
}

extension Double: PostgresDecodable {
    public init?(postgresText text: String) {
        switch text {
        case "NaN": self = .nan
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        default: self.init(text)
        }
    }
}

extension UUID: PostgresDecodable {
    public init?(postgresText text: String) {
        self.init(uuidString: text)
    }
}

extension Date: PostgresDecodable {
    /// Reads `timestamptz`, `timestamp` (as UTC) and `date` (midnight UTC) output.
    public init?(postgresText text: String) {
        guard let date = PostgresTimestamp.parse(text) else { return nil }
        self = date
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init?(postgresText text: String) {
        guard let value = Wrapped(postgresText: text) else { return nil }
        self = .some(value)
    }

    public static var postgresNullValue: Wrapped?? { .some(.none) }
}

extension Array: PostgresDecodable where Element: PostgresArrayElement {
    public init?(postgresText text: String) {
        guard let elements = Element.postgresArray(fromText: text) else { return nil }
        self = elements
    }
}
