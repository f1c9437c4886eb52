import CountersignCore

/// Decodes a request body strictly: the text must be RFC 8259 JSON, and every member of every
/// object a type reads member by member must be one the type asked about, so that a misspelt
/// field is refused instead of silently meaning its default.
///
/// Replaces Foundation's JSONDecoder for request bodies, throwing the same `DecodingError`s
/// (so `JSONBody.describe` words them the same way) at a fraction of the cost: the body is
/// parsed once into a flat tree, member names are compared as bytes, and the decoder, being
/// two words, is passed as `any Decoder` without an allocation.
struct JSONTreeDecoder: Decoder, SingleValueDecodingContainer {
    let state: JSONDecodingState
    let node: Int

    /// Decodes `type` from `text`.
    ///
    /// - Throws: `JSONSyntaxError` when `text` is not JSON; `DecodingError` when it does not fit
    ///   `type`; `CountersignError` `unknown_field` naming the first member nobody read, and
    ///   whatever the types' own decoding throws.
    static func decode<T: Decodable>(_ type: T.Type, from text: [UInt8]) throws -> T {
        let state = JSONDecodingState(tree: try JSONTreeParser.parse(text))
        let value = try state.decode(type, at: 0)
        if let unknown = state.firstUnreadMember() {
            throw CountersignError(.unknownField, "\(unknown) is not a known field")
        }
        return value
    }

    var codingPath: [any CodingKey] { state.codingPath(to: node) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard state.kind(of: node) == .object else { throw state.mismatch([String: Any].self, at: node) }
        state.open(node)
        return KeyedDecodingContainer(JSONTreeKeyedContainer<Key>(state: state, object: node))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard state.kind(of: node) == .array else { throw state.mismatch([Any].self, at: node) }
        return JSONTreeUnkeyedContainer(state: state, array: node)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        self
    }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { state.kind(of: node) == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try state.bool(at: node) }
    func decode(_ type: String.Type) throws -> String { try state.string(at: node) }
    func decode(_ type: Double.Type) throws -> Double { try state.double(at: node) }
    func decode(_ type: Float.Type) throws -> Float { try state.float(at: node) }
    func decode(_ type: Int.Type) throws -> Int { try state.integer(at: node, as: type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try state.integer(at: node, as: type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try state.integer(at: node, as: type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try state.integer(at: node, as: type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try state.integer(at: node, as: type) }
    func decode(_ type: UInt.Type) throws -> UInt { try state.integer(at: node, as: type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try state.integer(at: node, as: type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try state.integer(at: node, as: type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try state.integer(at: node, as: type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try state.integer(at: node, as: type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try state.decode(type, at: node) }
}
