/// The elements of one array, in order. A value that fails to decode is not stepped over, as
/// with Foundation's decoder.
///
/// Three words, so that it fits in an existential's inline buffer: `any UnkeyedDecodingContainer`
/// costs no allocation.
struct JSONTreeUnkeyedContainer: UnkeyedDecodingContainer {
    let state: JSONDecodingState
    private let array: UInt32
    private let elementCount: UInt32
    private var index: UInt32 = 0
    /// The node of the element at `index`.
    private var element: UInt32

    init(state: JSONDecodingState, array: Int) {
        self.state = state
        self.array = UInt32(array)
        elementCount = state.tree.nodes[array].length
        element = UInt32(array + 1)
    }

    var codingPath: [any CodingKey] { state.codingPath(to: Int(array)) }
    var count: Int? { Int(elementCount) }
    var isAtEnd: Bool { index >= elementCount }
    var currentIndex: Int { Int(index) }

    mutating func decodeNil() throws -> Bool {
        guard state.kind(of: try current(Never?.self)) == .null else { return false }
        advance()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next { [state] in try state.bool(at: $0) } }
    mutating func decode(_ type: String.Type) throws -> String { try next { [state] in try state.string(at: $0) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next { [state] in try state.double(at: $0) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next { [state] in try state.float(at: $0) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try nextInteger() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try nextInteger() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try nextInteger() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try nextInteger() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try nextInteger() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try nextInteger() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try nextInteger() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try nextInteger() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try nextInteger() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try nextInteger() }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next { [state] in try state.decode(type, at: $0) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next { [state] in try JSONTreeDecoder(state: state, node: $0).container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next { [state] in try JSONTreeDecoder(state: state, node: $0).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next { [state] in JSONTreeDecoder(state: state, node: $0) }
    }

    /// Reads the current element with `read` and steps past it.
    private mutating func next<T>(_ read: (Int) throws -> T) throws -> T {
        let value = try read(try current(T.self))
        advance()
        return value
    }

    private mutating func nextInteger<Value: FixedWidthInteger>() throws -> Value {
        try next { [state] in try state.integer(at: $0, as: Value.self) }
    }

    /// The node of the current element; past the end, `valueNotFound` as Foundation threw.
    private func current(_ type: Any.Type) throws -> Int {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, DecodingError.Context(codingPath: codingPath + [JSONPathKey(intValue: currentIndex)], debugDescription: "Unkeyed container is at end.")
            )
        }
        return Int(element)
    }

    private mutating func advance() {
        element = state.tree.nodes[Int(element)].end
        index += 1
    }
}
