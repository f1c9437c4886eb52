public import Foundation

extension PostgresValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        self = .text(value)
    }
}

extension PostgresValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) {
        self = .int(value)
    }
}

extension PostgresValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension PostgresValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension PostgresValue {
    /// `.text(value)`, or `.null` for nil.
    public init(_ value: String?) {
        self = value.map { .text($0) } ?? .null
    }

    /// `.int(value)`, or `.null` for nil.
    public init(_ value: Int?) {
        self = value.map { .int(Int64($0)) } ?? .null
    }

    /// `.int(value)`, or `.null` for nil.
    public init(_ value: Int64?) {
        self = value.map { .int($0) } ?? .null
    }

    /// `.int(value)`, or `.null` for nil.
    public init(_ value: Int32?) {
        self = value.map { .int(Int64($0)) } ?? .null
    }

    /// `.bool(value)`, or `.null` for nil.
    public init(_ value: Bool?) {
        self = value.map { .bool($0) } ?? .null
    }

    /// `.double(value)`, or `.null` for nil.
    public init(_ value: Double?) {
        self = value.map { .double($0) } ?? .null
    }

    /// `.bytea(value)`, or `.null` for nil.
    public init(_ value: [UInt8]?) {
        self = value.map { .bytea($0) } ?? .null
    }

    /// `.uuid(value)`, or `.null` for nil.
    public init(_ value: UUID?) {
        self = value.map { .uuid($0) } ?? .null
    }

    /// `.timestamp(value)`, or `.null` for nil.
    public init(_ value: Date?) {
        self = value.map { .timestamp($0) } ?? .null
    }

    /// `.textArray(value)`, or `.null` for nil.
    public init(_ value: [String]?) {
        self = value.map { .textArray($0) } ?? .null
    }
}
