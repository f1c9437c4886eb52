import Foundation

/// Writes the API's JSON: object keys sorted, timestamps as ``Timestamp`` writes them, UUIDs in
/// lower case (RFC 9562's output form, and the form the database and the log lines show), `Data`
/// as base64, slashes unescaped.
///
/// Foundation's `JSONEncoder` has no setting for the case of UUIDs: it writes `uuidString`,
/// which is upper case.
public struct APIJSONEncoder: Sendable {
    public init() {}

    public func encode(_ value: some Encodable) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try Self.value(of: value, codingPath: []).write(to: &bytes)
        return bytes
    }

    /// The JSON text of `value`.
    public func text(_ value: some Encodable) throws -> String {
        String(decoding: try encode(value), as: UTF8.self)
    }

    fileprivate static func value(of value: some Encodable, codingPath: [any CodingKey]) throws -> Node {
        switch value {
        case let string as String: return .string(string)
        case let bool as Bool: return .bool(bool)
        case let integer as any BinaryInteger: return .number("\(integer)")
        case let uuid as UUID: return .string(uuid.text)
        case let date as Date: return .string(Timestamp.format(date))
        case let data as Data: return .string(data.base64EncodedString())
        case let url as URL: return .string(url.absoluteString)
        case let number as Double: return try .number(Self.number(number, codingPath: codingPath))
        case let number as Float: return try .number(Self.number(Double(number), codingPath: codingPath))
        default:
            let encoder = NodeEncoder(codingPath: codingPath)
            try value.encode(to: encoder)
            // A value that encoded nothing is an empty object, as with JSONEncoder.
            return encoder.storage.node ?? .object(ObjectNode())
        }
    }

    private static func number(_ value: Double, codingPath: [any CodingKey]) throws -> String {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "JSON has no \(value)"))
        }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

// MARK: - The document being built

/// A JSON value under construction. Objects and arrays are references, so that a container
/// handed out by the encoder keeps writing into the document after it is returned.
private enum Node {
    case object(ObjectNode)
    case array(ArrayNode)
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    func write(to bytes: inout [UInt8]) {
        switch self {
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            // Sorted by UTF-8 bytes: the order does not depend on the locale.
            for (index, member) in object.members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONObjectText.appendString(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        case .array(let array):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in array.elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .string(let string):
            JSONObjectText.appendString(string, to: &bytes)
        case .number(let text):
            bytes.append(contentsOf: text.utf8)
        case .bool(let value):
            bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .null:
            bytes.append(contentsOf: "null".utf8)
        }
    }
}

private final class ObjectNode {
    var members: [String: Node] = [:]
}

private final class ArrayNode {
    var elements: [Node] = []
}

/// Where one encoder's value goes: set once by a single-value container, or an object or
/// array that its containers fill.
private final class NodeSlot {
    var node: Node?

    func object() -> ObjectNode {
        if case .object(let object) = node { return object }
        let object = ObjectNode()
        node = .object(object)
        return object
    }

    func array() -> ArrayNode {
        if case .array(let array) = node { return array }
        let array = ArrayNode()
        node = .array(array)
        return array
    }
}

// MARK: - Encoder and containers

/// An encoder that builds its value in `storage`.
private protocol SlotEncoder: Encoder {
    var storage: NodeSlot { get }
}

extension SlotEncoder {
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(ObjectContainer<Key>(object: storage.object(), codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        ArrayContainer(array: storage.array(), codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ValueContainer(slot: storage, codingPath: codingPath)
    }
}

private struct NodeEncoder: SlotEncoder {
    let codingPath: [any CodingKey]
    let storage = NodeSlot()
}

/// An encoder whose value becomes a member or an element once it is done (`superEncoder`).
private final class ChildEncoder: SlotEncoder {
    let codingPath: [any CodingKey]
    let storage = NodeSlot()
    private let store: (Node) -> Void

    init(codingPath: [any CodingKey], store: @escaping (Node) -> Void) {
        self.codingPath = codingPath
        self.store = store
    }

    deinit { store(storage.node ?? .object(ObjectNode())) }
}

private struct ObjectContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: ObjectNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { object.members[key.stringValue] = .null }
    mutating func encode(_ value: Bool, forKey key: Key) throws { object.members[key.stringValue] = .bool(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { object.members[key.stringValue] = .string(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { object.members[key.stringValue] = .number(String(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { object.members[key.stringValue] = .number(String(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { object.members[key.stringValue] = .number(String(value)) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { object.members[key.stringValue] = .number(String(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { object.members[key.stringValue] = .number(String(value)) }

    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        object.members[key.stringValue] = try APIJSONEncoder.value(of: value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectNode()
        object.members[key.stringValue] = .object(nested)
        return KeyedEncodingContainer(ObjectContainer<NestedKey>(object: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayNode()
        object.members[key.stringValue] = .array(nested)
        return ArrayContainer(array: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(named: "super")
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(named: key.stringValue)
    }

    private func superEncoder(named name: String) -> any Encoder {
        let object = object
        return ChildEncoder(codingPath: codingPath) { object.members[name] = $0 }
    }
}

private struct ArrayContainer: UnkeyedEncodingContainer {
    let array: ArrayNode
    let codingPath: [any CodingKey]
    var count: Int { array.elements.count }

    mutating func encodeNil() throws { array.elements.append(.null) }
    mutating func encode(_ value: Bool) throws { array.elements.append(.bool(value)) }
    mutating func encode(_ value: String) throws { array.elements.append(.string(value)) }
    mutating func encode(_ value: Int) throws { array.elements.append(.number(String(value))) }
    mutating func encode(_ value: Int64) throws { array.elements.append(.number(String(value))) }

    mutating func encode(_ value: some Encodable) throws {
        array.elements.append(try APIJSONEncoder.value(of: value, codingPath: codingPath + [IndexKey(count)]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectNode()
        let path = codingPath + [IndexKey(count)]
        array.elements.append(.object(nested))
        return KeyedEncodingContainer(ObjectContainer<NestedKey>(object: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayNode()
        let path = codingPath + [IndexKey(count)]
        array.elements.append(.array(nested))
        return ArrayContainer(array: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        // The element's place is kept now, so that elements encoded meanwhile stay in order.
        let array = array
        let index = array.elements.count
        array.elements.append(.null)
        return ChildEncoder(codingPath: codingPath + [IndexKey(index)]) { array.elements[index] = $0 }
    }
}

private struct ValueContainer: SingleValueEncodingContainer {
    let slot: NodeSlot
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { slot.node = .null }
    mutating func encode(_ value: Bool) throws { slot.node = .bool(value) }
    mutating func encode(_ value: String) throws { slot.node = .string(value) }
    mutating func encode(_ value: Int) throws { slot.node = .number(String(value)) }
    mutating func encode(_ value: Int64) throws { slot.node = .number(String(value)) }

    mutating func encode(_ value: some Encodable) throws {
        slot.node = try APIJSONEncoder.value(of: value, codingPath: codingPath)
    }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }

    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}
