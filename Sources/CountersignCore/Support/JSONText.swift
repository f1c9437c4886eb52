/// Builds a JSON object by appending members, for the few documents written on every
/// decision, where Foundation's JSONEncoder costs more than the rest of the work together.
/// Members appear in the order they are added.
public struct JSONObjectText: Sendable {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var empty = true

    public init() {}

    /// The finished object.
    public var text: String {
        var finished = bytes
        finished.append(UInt8(ascii: "}"))
        return String(decoding: finished, as: UTF8.self)
    }


    public mutating func add(_ key: String, _ value: String?) {
        member(key)
        if let value { Self.appendString(value, to: &bytes) } else { appendNull() }
    }

    public mutating func add(_ key: String, _ value: Int?) {
        member(key)
        if let value { bytes.append(contentsOf: String(value).utf8) } else { appendNull() }
    }

    public mutating func add(_ key: String, _ value: Int64?) {
        add(key, value.map(Int.init))
    }

    public mutating func add(_ key: String, _ value: Bool?) {
        member(key)
        if let value { bytes.append(contentsOf: (value ? "true" : "false").utf8) } else { appendNull() }
    }

    /// A value that is already JSON text (an object built with this type, say).
    public mutating func add(_ key: String, json value: String?) {
        member(key)
        if let value { bytes.append(contentsOf: value.utf8) } else { appendNull() }
    }

    private mutating func member(_ key: String) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        Self.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func appendNull() {
        bytes.append(contentsOf: "null".utf8)
    }

    /// Appends `value` as a JSON string (RFC 8259 escapes).
    static func appendString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        let utf8 = value.utf8
        var plain = true
        for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            plain = false
            break
        }
        if plain {
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A value that writes its own JSON (with sorted keys, as the API's other responses), for
/// responses sent on every decision.
public protocol JSONTextRepresentable {
    var jsonText: String { get }
}
