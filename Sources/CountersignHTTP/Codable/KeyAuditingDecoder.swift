import CountersignCore
import Foundation

/// Decodes through another decoder while noting, for every JSON object, which of its keys the
/// types being decoded looked at; whatever the client sent beyond those is an unknown field.
///
/// This is how requests refuse unknown fields (a misspelt field in a policy would otherwise
/// silently mean its default) without parsing or encoding anything twice. Foundation types with
/// their own decoding strategies (Date, Data, URL, Decimal) and scalars go straight to the
/// underlying decoder; everything else is decoded through this one.
struct KeyAuditingDecoder: Decoder {
    let base: any Decoder
    let audit: KeyAudit

    var codingPath: [any CodingKey] { base.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { base.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let object = audit.object(at: codingPath, sent: try base.container(keyedBy: AnyCodingKey.self).allKeys.map(\.stringValue))
        return KeyedDecodingContainer(AuditingKeyedContainer(base: try base.container(keyedBy: type), object: object, audit: audit))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        AuditingUnkeyedContainer(base: try base.unkeyedContainer(), audit: audit)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        AuditingSingleValueContainer(base: try base.singleValueContainer(), decoder: self)
    }

    /// Decodes `type` from `decoder`, auditing it unless it is one of the leaves above.
    static func decode<T: Decodable>(_ type: T.Type, from decoder: any Decoder, audit: KeyAudit) throws -> T {
        try T(from: KeyAuditingDecoder(base: decoder, audit: audit))
    }

    static func isLeaf(_ type: Any.Type) -> Bool {
        type == String.self || type == Bool.self || type == Int.self || type == Int64.self || type == Int32.self
            || type == Double.self || type == Float.self || type == UInt.self || type == UInt16.self || type == UInt8.self
            || type == Date.self || type == Data.self || type == URL.self || type == Decimal.self || type == UUID.self
            || type is any JSONScalarDecodable.Type
    }
}

/// The objects of one request and the keys read from each. Lives for one synchronous decode.
final class KeyAudit {
    final class Object {
        let codingPath: [any CodingKey]
        let sent: [String]
        var read: Set<String> = []

        init(codingPath: [any CodingKey], sent: [String]) {
            self.codingPath = codingPath
            self.sent = sent
        }
    }

    private var objects: [Object] = []

    func object(at codingPath: [any CodingKey], sent: [String]) -> Object {
        let object = Object(codingPath: codingPath, sent: sent)
        objects.append(object)
        return object
    }

    /// The first key a client sent that nothing read, as a field path.
    func firstUnknownKey() -> FieldPath? {
        for object in objects {
            if let key = object.sent.sorted().first(where: { !object.read.contains($0) }) {
                return FieldPath(object.codingPath + [AnyCodingKey(stringValue: key)])
            }
        }
        return nil
    }
}

/// A request body decoded with every key the client sent accounted for.
struct StrictlyDecoded<T: Decodable>: Decodable {
    let value: T

    init(from decoder: any Decoder) throws {
        let audit = KeyAudit()
        value = try KeyAuditingDecoder.decode(T.self, from: decoder, audit: audit)
        if let unknown = audit.firstUnknownKey() {
            throw CountersignError(.unknownField, "\(unknown) is not a known field")
        }
    }
}

struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

private struct AuditingKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let base: KeyedDecodingContainer<Key>
    let object: KeyAudit.Object
    let audit: KeyAudit

    var codingPath: [any CodingKey] { base.codingPath }
    var allKeys: [Key] { base.allKeys }

    private func read(_ key: Key) {
        object.read.insert(key.stringValue)
    }

    func contains(_ key: Key) -> Bool {
        read(key)
        return base.contains(key)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        read(key)
        return try base.decodeNil(forKey: key)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        read(key)
        if KeyAuditingDecoder.isLeaf(type) { return try base.decode(type, forKey: key) }
        return try KeyAuditingDecoder.decode(type, from: try base.superDecoder(forKey: key), audit: audit)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        read(key)
        guard base.contains(key), try !base.decodeNil(forKey: key) else { return nil }
        return try decode(type, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        read(key)
        return try KeyAuditingDecoder(base: try base.superDecoder(forKey: key), audit: audit).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        read(key)
        return AuditingUnkeyedContainer(base: try base.nestedUnkeyedContainer(forKey: key), audit: audit)
    }

    func superDecoder() throws -> any Decoder {
        KeyAuditingDecoder(base: try base.superDecoder(), audit: audit)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        read(key)
        return KeyAuditingDecoder(base: try base.superDecoder(forKey: key), audit: audit)
    }
}

private struct AuditingUnkeyedContainer: UnkeyedDecodingContainer {
    var base: any UnkeyedDecodingContainer
    let audit: KeyAudit

    var codingPath: [any CodingKey] { base.codingPath }
    var count: Int? { base.count }
    var isAtEnd: Bool { base.isAtEnd }
    var currentIndex: Int { base.currentIndex }

    mutating func decodeNil() throws -> Bool {
        try base.decodeNil()
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if KeyAuditingDecoder.isLeaf(type) { return try base.decode(type) }
        return try KeyAuditingDecoder.decode(type, from: try base.superDecoder(), audit: audit)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try KeyAuditingDecoder(base: try base.superDecoder(), audit: audit).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        AuditingUnkeyedContainer(base: try base.nestedUnkeyedContainer(), audit: audit)
    }

    mutating func superDecoder() throws -> any Decoder {
        KeyAuditingDecoder(base: try base.superDecoder(), audit: audit)
    }
}

private struct AuditingSingleValueContainer: SingleValueDecodingContainer {
    let base: any SingleValueDecodingContainer
    let decoder: KeyAuditingDecoder

    var codingPath: [any CodingKey] { base.codingPath }

    func decodeNil() -> Bool {
        base.decodeNil()
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if KeyAuditingDecoder.isLeaf(type) { return try base.decode(type) }
        return try T(from: decoder)
    }
}
