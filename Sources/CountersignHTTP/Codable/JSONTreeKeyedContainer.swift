/// The members of one object. Every way of asking about a member (`contains`, `decodeNil`,
/// `decode`, `decodeIfPresent`, nested containers, `superDecoder`) marks it as read.
struct JSONTreeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let state: JSONDecodingState
    let object: Int

    var codingPath: [any CodingKey] { state.codingPath(to: object) }

    var allKeys: [Key] {
        state.tree.memberNames(of: object).compactMap { Key(stringValue: state.tree.string(at: $0)) }
    }

    func contains(_ key: Key) -> Bool {
        state.member(key.stringValue, of: object) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        state.kind(of: try value(for: key)) == .null
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try state.bool(at: value(for: key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try state.string(at: value(for: key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try state.double(at: value(for: key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try state.float(at: value(for: key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try state.integer(at: value(for: key), as: type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try state.integer(at: value(for: key), as: type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try state.integer(at: value(for: key), as: type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try state.integer(at: value(for: key), as: type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try state.integer(at: value(for: key), as: type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try state.integer(at: value(for: key), as: type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try state.integer(at: value(for: key), as: type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try state.integer(at: value(for: key), as: type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try state.integer(at: value(for: key), as: type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try state.integer(at: value(for: key), as: type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try state.decode(type, at: value(for: key)) }

    // One lookup each, where the default implementations would look up the member three times.

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.bool(at: node)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.string(at: node)
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.double(at: node)
    }

    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.float(at: node)
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.integer(at: node, as: type)
    }

    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.integer(at: node, as: type)
    }

    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.integer(at: node, as: type)
    }

    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.integer(at: node, as: type)
    }

    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.integer(at: node, as: type)
    }

    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.integer(at: node, as: type)
    }

    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.integer(at: node, as: type)
    }

    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.integer(at: node, as: type)
    }

    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.integer(at: node, as: type)
    }

    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.integer(at: node, as: type)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let node = presentValue(for: key) else { return nil }
        return try state.decode(type, at: node)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONTreeDecoder(state: state, node: value(for: key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONTreeDecoder(state: state, node: value(for: key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try JSONTreeDecoder(state: state, node: value(named: JSONPathKey(stringValue: "super")))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONTreeDecoder(state: state, node: try value(for: key))
    }

    private func value(for key: Key) throws -> Int {
        try value(named: key)
    }

    private func value(named key: some CodingKey) throws -> Int {
        guard let node = state.member(key.stringValue, of: object) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "No value for key '\(key.stringValue)'."))
        }
        return node
    }

    /// The member's value node, unless it is missing or `null`.
    private func presentValue(for key: Key) -> Int? {
        guard let node = state.member(key.stringValue, of: object), state.kind(of: node) != .null else { return nil }
        return node
    }
}
