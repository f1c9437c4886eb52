import CountersignCore
import Foundation

/// One decode of a `JSONTree`, shared by the decoder and its containers: reads values with the
/// errors Foundation's decoder threw, and notes, for every object a type opened, which members
/// it asked about, so that whatever else the client sent can be refused as unknown.
final class JSONDecodingState {
    let tree: JSONTree
    /// Descriptions `JSONBody` tells apart from other invalid values: a number that fits no type
    /// it is read as (the start of the description), and a string that is no UUID.
    static let numberOutOfRange = "The number does not fit in"
    static let invalidUUID = "Attempted to decode UUID from invalid UUID string."
    /// Per node. For a member name: 1 once a type asked for it. For an object: 0 until a type
    /// opens it; then the name node where the next member lookup starts (types mostly ask in
    /// the order clients send, so lookups mostly succeed on the first comparison).
    private var marks: [UInt32]

    init(tree: JSONTree) {
        self.tree = tree
        marks = Array(repeating: 0, count: tree.nodes.count)
    }

    func kind(of node: Int) -> JSONTree.Kind {
        tree.nodes[node].kind
    }

    func codingPath(to node: Int) -> [any CodingKey] {
        tree.codingPath(to: node)
    }

    // MARK: Members

    /// Notes that a type reads the object at `object` member by member.
    func open(_ object: Int) {
        if marks[object] == 0 { marks[object] = UInt32(object + 1) }
    }

    /// The value node of the member called `name` in the opened object at `object`, noting the
    /// member as read.
    func member(_ name: String, of object: Int) -> Int? {
        let count = Int(tree.nodes[object].length)
        guard count > 0 else { return nil }
        let end = Int(tree.nodes[object].end)
        var name = name
        return name.withUTF8 { spelling in
            var candidate = Int(marks[object])
            for _ in 0..<count {
                var next = Int(tree.nodes[candidate + 1].end)
                if next == end { next = object + 1 }
                if tree.string(at: candidate, equals: spelling) {
                    marks[candidate] = 1
                    marks[object] = UInt32(next)
                    return candidate + 1
                }
                candidate = next
            }
            return nil
        }
    }

    /// The first member nobody read: objects in document order, names within one object in
    /// sorted order.
    func firstUnreadMember() -> FieldPath? {
        for (object, node) in tree.nodes.enumerated() where node.kind == .object && marks[object] != 0 {
            var first: String?
            for name in tree.memberNames(of: object) where marks[name] == 0 {
                let text = tree.string(at: name)
                if first.map({ text < $0 }) ?? true { first = text }
            }
            if let first {
                return FieldPath(codingPath(to: object) + [JSONPathKey(stringValue: first)])
            }
        }
        return nil
    }

    // MARK: Values

    /// Decodes `type` from `node`: Foundation types the way JSONDecoder read them (with the
    /// API's RFC 3339 dates), everything else by its own `init(from:)`.
    func decode<T: Decodable>(_ type: T.Type, at node: Int) throws -> T {
        if T.self == UUID.self { return try uuid(at: node) as! T }
        if T.self == Date.self { return try date(at: node) as! T }
        if T.self == Data.self { return try data(at: node) as! T }
        if T.self == URL.self { return try url(at: node) as! T }
        return try T(from: JSONTreeDecoder(state: self, node: node))
    }

    func string(at node: Int) throws -> String {
        guard kind(of: node) == .string else { throw mismatch(String.self, at: node) }
        return tree.string(at: node)
    }

    func bool(at node: Int) throws -> Bool {
        switch kind(of: node) {
        case .true: return true
        case .false: return false
        default: throw mismatch(Bool.self, at: node)
        }
    }

    func integer<Value: FixedWidthInteger>(at node: Int, as type: Value.Type) throws -> Value {
        guard kind(of: node) == .number else { throw mismatch(type, at: node) }
        switch tree.integer(at: node, as: type) {
        case .value(let value): return value
        case .notInteger: throw DecodingError.typeMismatch(type, context(at: node, "Expected to decode \(type) but found a number with a fraction."))
        case .outOfRange: throw DecodingError.dataCorrupted(context(at: node, "\(Self.numberOutOfRange) \(type)."))
        }
    }

    func double(at node: Int) throws -> Double {
        guard kind(of: node) == .number else { throw mismatch(Double.self, at: node) }
        guard let value = tree.double(at: node) else { throw DecodingError.dataCorrupted(context(at: node, "\(Self.numberOutOfRange) Double.")) }
        return value
    }

    func float(at node: Int) throws -> Float {
        let value = Float(try double(at: node))
        guard value.isFinite else { throw DecodingError.dataCorrupted(context(at: node, "\(Self.numberOutOfRange) Float.")) }
        return value
    }

    private func uuid(at node: Int) throws -> UUID {
        guard let id = UUID(text: try string(at: node)) else {
            throw DecodingError.dataCorrupted(context(at: node, Self.invalidUUID))
        }
        return id
    }

    private func date(at node: Int) throws -> Date {
        guard let date = Timestamp.parse(try string(at: node)) else {
            throw CountersignError(.invalidField, "\(FieldPath(codingPath(to: node))) must be an RFC 3339 date-time")
        }
        return date
    }

    private func data(at node: Int) throws -> Data {
        guard let data = Data(base64Encoded: try string(at: node)) else {
            throw DecodingError.dataCorrupted(context(at: node, "Encountered Data is not valid Base64."))
        }
        return data
    }

    private func url(at node: Int) throws -> URL {
        guard let url = URL(string: try string(at: node)) else {
            throw DecodingError.dataCorrupted(context(at: node, "Invalid URL string."))
        }
        return url
    }

    // MARK: Errors

    /// A value of the wrong JSON type; `null` where a value is needed is `valueNotFound`.
    func mismatch(_ type: Any.Type, at node: Int) -> DecodingError {
        let kind = kind(of: node)
        if kind == .null {
            return DecodingError.valueNotFound(type, context(at: node, "Cannot get value of type \(type) -- found null value instead"))
        }
        return DecodingError.typeMismatch(type, context(at: node, "Expected to decode \(type) but found \(kind) instead."))
    }

    func context(at node: Int, _ description: String) -> DecodingError.Context {
        DecodingError.Context(codingPath: codingPath(to: node), debugDescription: description)
    }
}
