import CountersignCore
import Foundation
import Testing

@Suite("API JSON encoder")
struct APIJSONEncoderTests {
    struct Inner: Codable, Equatable {
        var name: String
        var tags: [String]
        var limit: Int?
    }

    enum Kind: String, Codable {
        case first, second
    }

    /// Every shape the API's response types use: nested objects, arrays of objects, optionals
    /// left out, dictionaries, enums, integers of several widths, booleans, dates, data, UUIDs.
    struct Document: Codable {
        var id: UUID
        var ids: [UUID]
        var owner: UUID?
        var missing: String?
        var text: String
        var count: Int
        var small: Int8
        var big: UInt64
        var flag: Bool
        var kind: Kind
        var at: Date
        var bytes: Data
        var ratio: Double
        var whole: Double
        var inner: Inner
        var list: [Inner]
        var map: [String: Int]
        var nested: [[Int]]
        var link: URL
    }

    static let document = Document(
        id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        ids: [UUID(uuidString: "01A206EE-F771-7AE9-B18D-EFBFF74C134F")!],
        owner: UUID(uuidString: "0192D3C4-AAAA-7BBB-8CCC-DDDDEEEEFFFF")!,
        missing: nil,
        text: "quote \" backslash \\ slash / tab \t newline \n bell \u{07} é 😀",
        count: -42,
        small: -8,
        big: UInt64.max,
        flag: true,
        kind: .second,
        at: Date(timeIntervalSince1970: 1_709_211_845.5),
        bytes: Data([0, 1, 2, 250, 251, 252]),
        ratio: 0.1,
        whole: 3,
        inner: Inner(name: "a", tags: [], limit: nil),
        list: [Inner(name: "b", tags: ["x", "y"], limit: 5), Inner(name: "c", tags: [], limit: 0)],
        map: ["zeta": 1, "alpha": 2, "Beta": 3, "beta10": 4, "beta9": 5],
        nested: [[1, 2], [], [3]],
        link: URL(string: "https://intranet.example.com/a/b?c=d")!
    )

    static func foundationEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.format(date))
        }
        return encoder
    }

    /// UUID strings lowered, so Foundation's output can be compared with ours.
    static func loweringUUIDs(_ value: Any) -> Any {
        switch value {
        case let string as String where UUID(uuidString: string) != nil: return string.lowercased()
        case let object as [String: Any]: return object.mapValues(loweringUUIDs)
        case let array as [Any]: return array.map(loweringUUIDs)
        default: return value
        }
    }

    @Test("writes what Foundation's JSONEncoder writes, but UUIDs in lower case")
    func matchesFoundation() throws {
        let ours = try APIJSONEncoder().encode(Self.document)
        let theirs = try Self.foundationEncoder().encode(Self.document)
        let oursParsed = try JSONSerialization.jsonObject(with: Data(ours))
        let theirsParsed = Self.loweringUUIDs(try JSONSerialization.jsonObject(with: theirs))
        #expect(NSDictionary(dictionary: oursParsed as! [String: Any]) == NSDictionary(dictionary: theirsParsed as! [String: Any]))
        let text = String(decoding: ours, as: UTF8.self)
        #expect(text.contains(#""id":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#))
        #expect(text.contains(#""ids":["01a206ee-f771-7ae9-b18d-efbff74c134f"]"#))
        #expect(!text.contains("missing"))
        #expect(text.hasSuffix(#""whole":3}"#))
        #expect(text.contains(#""at":"2024-02-29T13:04:05.500Z""#))
        #expect(text.contains("https://intranet.example.com/a/b?c=d"))
        // Decodes back to the same document.
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            try #require(Timestamp.parse(try decoder.singleValueContainer().decode(String.self)))
        }
        let back = try decoder.decode(Document.self, from: Data(ours))
        #expect(back.id == Self.document.id && back.text == Self.document.text && back.at == Self.document.at)
        #expect(back.list == Self.document.list && back.map == Self.document.map && back.bytes == Self.document.bytes)
    }

    @Test("keys are sorted by their bytes at every level, the same on every machine")
    func sortedKeys() throws {
        let text = try APIJSONEncoder().text(["b": ["y": 1, "x": 2], "a": ["Z": 3, "z": 4], "B": [:]])
        #expect(text == #"{"B":{},"a":{"Z":3,"z":4},"b":{"x":2,"y":1}}"#)
    }

    @Test("top-level values of every kind, and a value that encodes nothing")
    func topLevelValues() throws {
        struct Empty: Encodable {}
        let encoder = APIJSONEncoder()
        #expect(try encoder.text("a/b") == #""a/b""#)
        #expect(try encoder.text(7) == "7")
        #expect(try encoder.text(false) == "false")
        #expect(try encoder.text([Int?.none, 1]) == "[null,1]")
        #expect(try encoder.text(Empty()) == "{}")
        #expect(try encoder.text(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!) == #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#)
    }

    /// Encoded through `superEncoder`, as a subclass encodes its superclass's part.
    struct Layered: Encodable {
        enum Keys: String, CodingKey { case own, named }
        var throughArray = false

        func encode(to encoder: any Encoder) throws {
            var object = encoder.container(keyedBy: Keys.self)
            try ["base": 2].encode(to: object.superEncoder())
            try "named".encode(to: object.superEncoder(forKey: .named))
            var array = object.nestedUnkeyedContainer(forKey: .own)
            try array.encode(3)
            if throughArray { try [4].encode(to: array.superEncoder()) }
            try array.encode(5)
        }
    }

    @Test("values written through superEncoder land where Foundation puts them")
    func superEncoders() throws {
        let ours = try JSONSerialization.jsonObject(with: Data(try APIJSONEncoder().encode(Layered()))) as! NSDictionary
        let theirs = try JSONSerialization.jsonObject(with: try Self.foundationEncoder().encode(Layered())) as! NSDictionary
        #expect(ours == theirs)
        // An array's superEncoder keeps its element's place (Foundation on Linux traps on it).
        #expect(try APIJSONEncoder().text(Layered(throughArray: true)) == #"{"named":"named","own":[3,[4],5],"super":{"base":2}}"#)
    }

    @Test("numbers JSON cannot hold are refused", arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteNumbers(value: Double) {
        #expect(throws: EncodingError.self) { try APIJSONEncoder().encode(["value": value]) }
    }
}
