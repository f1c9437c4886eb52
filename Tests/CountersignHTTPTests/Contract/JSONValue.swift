import Foundation

/// The one value type the contract checker works on: the YAML spec, JSON bodies and examples all land
/// here, so a schema, an example in it and a response body are compared by the same rules.
/// Integers are kept apart from doubles so that int64 ids survive exactly.
enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }

    /// JSON Schema counts 1.0 as an integer: "integer" is about the value, not its spelling.
    var isIntegral: Bool {
        switch self {
        case .integer: true
        case .number(let d): d.isFinite && d.rounded(.towardZero) == d
        default: false
        }
    }

    /// The JSON Schema type name ("integer" for integral numbers).
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number: isIntegral ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Equality as JSON Schema's `enum`, `const` and `uniqueItems` define it: numbers by value, so 1 == 1.0.
    func jsonEquals(_ other: JSONValue) -> Bool {
        switch (self, other) {
        case (.integer(let a), .integer(let b)): return a == b
        case (.integer, .number), (.number, .integer), (.number, .number):
            return doubleValue == other.doubleValue
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.jsonEquals($1) }
        case (.object(let a), .object(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map(value.jsonEquals) ?? false }
        default:
            return self == other
        }
    }
}

// MARK: - Rendering

extension JSONValue: CustomStringConvertible {
    /// Compact JSON with sorted keys, so violation messages are stable from run to run.
    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .number(let d):
            return d.isIntegral ? String(format: "%.0f", d) : "\(d)"
        case .string(let s): return Self.quote(s)
        case .array(let a): return "[" + a.map(\.description).joined(separator: ",") + "]"
        case .object(let o):
            return "{" + o.keys.sorted().map { Self.quote($0) + ":" + o[$0]!.description }.joined(separator: ",") + "}"
        }
    }

    /// For messages: long values are cut so one bad blob does not drown the report.
    var shortDescription: String {
        let full = description
        return full.count <= 80 ? full : String(full.prefix(77)) + "..."
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

private extension Double {
    var isIntegral: Bool { isFinite && rounded(.towardZero) == self && abs(self) < 1e15 }
}

// MARK: - Strict JSON parsing

struct JSONParseError: Error, CustomStringConvertible {
    let offset: Int
    let reason: String
    var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSONValue {
    /// A strict RFC 8259 parser. Foundation's decoders accept trailing commas and silently drop duplicate
    /// keys; a contract test must not, because a client in another language would choke on both.
    static func parse(_ data: Data) throws(JSONParseError) -> JSONValue {
        var parser = StrictJSONParser(bytes: Array(data))
        return try parser.parseDocument()
    }

    static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Data(text.utf8))
    }
}

private struct StrictJSONParser {
    let bytes: [UInt8]
    var index = 0
    var depth = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { throw fail("byte order mark") }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index != bytes.count { throw fail("unexpected trailing content") }
        return value
    }

    private func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: index, reason: reason) }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func expect(_ literal: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let utf8 = Array(literal.utf8)
        guard bytes.count - index >= utf8.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
            throw fail("unexpected character")
        }
        index += utf8.count
        return value
    }

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try nested { (p: inout Self) throws(JSONParseError) in try p.parseObject() }
        case UInt8(ascii: "["): return try nested { (p: inout Self) throws(JSONParseError) in try p.parseArray() }
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    /// Deeply nested garbage must fail, not overflow the test process's stack.
    private mutating func nested(
        _ body: (inout Self) throws(JSONParseError) -> JSONValue
    ) throws(JSONParseError) -> JSONValue {
        depth += 1
        defer { depth -= 1 }
        if depth > 512 { throw fail("nesting deeper than 512") }
        return try body(&self)
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let keyOffset = index
            let key = try parseString()
            if members[key] != nil { throw JSONParseError(offset: keyOffset, reason: "duplicate member \"\(key)\"") }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            members[key] = try parseValue()
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var isInteger = true
        func digits(_ p: inout Self) -> Int {
            let s = p.index
            while p.index < p.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(p.bytes[p.index]) { p.index += 1 }
            return p.index - s
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let intStart = index
        let intDigits = digits(&self)
        if intDigits == 0 { throw fail("expected a digit") }
        if intDigits > 1, bytes[intStart] == UInt8(ascii: "0") { throw JSONParseError(offset: intStart, reason: "leading zero") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            if digits(&self) == 0 { throw fail("expected a digit after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            if digits(&self) == 0 { throw fail("expected a digit in the exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let i = Int64(text) { return .integer(i) }
        guard let d = Double(text), d.isFinite else { throw JSONParseError(offset: start, reason: "number out of range") }
        return .number(d)
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var run = index
        func flush(_ p: Self, upTo end: Int) throws(JSONParseError) -> String {
            guard let s = String(validating: p.bytes[run..<end], as: UTF8.self) else {
                throw JSONParseError(offset: run, reason: "invalid UTF-8")
            }
            return s
        }
        while true {
            guard index < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                scalars.append(contentsOf: try flush(self, upTo: index).unicodeScalars)
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { throw fail("control character in string") }
            if byte != UInt8(ascii: "\\") { index += 1; continue }
            scalars.append(contentsOf: try flush(self, upTo: index).unicodeScalars)
            index += 1
            guard index < bytes.count else { throw fail("unterminated escape") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800...0xDBFF).contains(code) {
                    guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw fail("unpaired surrogate")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(code) {
                    throw fail("unpaired surrogate")
                }
                scalars.append(Unicode.Scalar(code)!)
            default:
                throw fail("invalid escape")
            }
            run = index
        }
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - index >= 4,
              bytes[index..<index + 4].allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
              let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else { throw fail("invalid \\u escape") }
        index += 4
        return code
    }
}
