/// Any JSON value, for the parts of the API whose shape belongs to someone else: the challenge
/// payloads of MobileFirst-style security checks, their failure and success payloads, and the
/// answer templates of security-check handlers.
///
/// Integers that fit 64 bits stay integers, so that `{"remainingAttempts": 2}` comes back as it
/// went in; other numbers are doubles.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The members, when this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value as an integer, when it is one (a whole double counts).
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): return value
        case .number(let value) where value.rounded() == value && abs(value) < 9.0e18: return Int64(value)
        default: return nil
        }
    }

    public var isNull: Bool { self == .null }

    /// A member of an object; `nil` for a missing member or when this is not an object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// How deeply arrays and objects nest: 0 for a scalar, 1 for `{}` or `[1]`.
    public var depth: Int {
        switch self {
        case .array(let items): 1 + (items.map(\.depth).max() ?? 0)
        case .object(let members): 1 + (members.values.map(\.depth).max() ?? 0)
        default: 0
        }
    }

    /// About the length of the value's JSON text in bytes (escapes inside strings are not
    /// counted): enough to hold payloads to a size limit without encoding them.
    public var approximateSize: Int {
        switch self {
        case .null: 4
        case .bool(let value): value ? 4 : 5
        case .integer(let value): String(value).utf8.count
        case .number(let value): String(value).utf8.count
        case .string(let text): text.utf8.count + 2
        case .array(let items): 2 + items.reduce(0) { $0 + $1.approximateSize } + max(0, items.count - 1)
        case .object(let members):
            2 + members.reduce(0) { $0 + $1.key.utf8.count + 3 + $1.value.approximateSize } + max(0, members.count - 1)
        }
    }

    /// Calls `body` with every string value at any depth (object keys are not values).
    public func forEachString(_ body: (String) throws -> Void) rethrows {
        switch self {
        case .string(let text): try body(text)
        case .array(let items): for item in items { try item.forEachString(body) }
        case .object(let members): for value in members.values { try value.forEachString(body) }
        default: break
        }
    }

    /// The value with every string replaced by `transform(string)`; keys are left alone.
    public func mapStrings(_ transform: (String) throws -> JSONValue) rethrows -> JSONValue {
        switch self {
        case .string(let text): try transform(text)
        case .array(let items): .array(try items.map { try $0.mapStrings(transform) })
        case .object(let members): .object(try members.mapValues { try $0.mapStrings(transform) })
        default: self
        }
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try Self.number(in: container) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// The value as a number; `nil` when it is no number. A number beyond `Double` (`1e400`) is an
    /// error of its own: tried as the other types, it would be reported as not being an object.
    private static func number(in container: any SingleValueDecodingContainer) throws -> Double? {
        do {
            return try container.decode(Double.self)
        } catch DecodingError.typeMismatch {
            return nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements) { _, last in last })
    }

    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}
