import CountersignCore
@testable import CountersignHTTP
import Foundation
import Testing

/// Generated documents read back as Foundation reads them, and mutated ones never do more than
/// fail with a 4xx error: the request-body parser is where every client's bytes arrive first.
@Suite("Request JSON: properties")
struct JSONTreeParserPropertyTests {
    typealias Payload = CountersignCore.JSONValue

    /// SplitMix64, seeded, so every run sees the same cases.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let alphabet: [String] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "é", "😀", "漢", "\u{7F}", "{", "]", ","]

    static func string(_ random: inout SeededGenerator) -> String {
        String((0..<Int.random(in: 0...8, using: &random)).map { _ in Self.alphabet.randomElement(using: &random)! }.joined())
    }

    static func value(depth: Int, _ random: inout SeededGenerator) -> Payload {
        switch Int.random(in: 0...(depth > 4 ? 4 : 6), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .integer(Int64.random(in: Int64.min...Int64.max, using: &random) >> UInt64.random(in: 0...63, using: &random))
        // Never whole: a whole double is written as an integer and reads back as one.
        case 3: return .number(Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 64 + 1.0 / 128)
        case 4: return .string(string(&random))
        case 5: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in value(depth: depth + 1, &random) })
        default:
            var members: [String: Payload] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) { members[string(&random)] = value(depth: depth + 1, &random) }
            return .object(members)
        }
    }

    @Test func generatedDocumentsReadAsFoundationReadsThem() throws {
        var random = SeededGenerator(state: 0xC0FF_EE00)
        let encoder = JSONEncoder()
        for _ in 0..<3000 {
            let document = Self.value(depth: 0, &random)
            let bytes = Array(try encoder.encode(document))
            let ours = try JSONBody.decode(Payload.self, from: bytes)
            #expect(ours == document, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(ours == (try JSONDecoder().decode(Payload.self, from: Data(bytes))))
        }
    }

    @Test func mutatedDocumentsParseOrFailWithACode() throws {
        var random = SeededGenerator(state: 0xBAD_C0DE)
        let encoder = JSONEncoder()
        let interesting: [UInt8] = Array(#"{}[]",:\"0-.eE+tfnu \#u{0}"#.utf8) + [0x80, 0xBF, 0xC0, 0xED, 0xF4, 0xF5, 0xFF]
        var refused = 0
        for _ in 0..<60_000 {
            var bytes = Array(try encoder.encode(Self.value(depth: 0, &random)))
            for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0...3, using: &random) {
                case 0: bytes[position] = interesting.randomElement(using: &random)!
                case 1: bytes.insert(interesting.randomElement(using: &random)!, at: position)
                case 2: bytes.remove(at: position)
                default: bytes.removeLast(Int.random(in: 0...(bytes.count - position), using: &random))
                }
            }
            do {
                _ = try JSONBody.decode(Payload.self, from: bytes)
            } catch let error as CountersignError {
                refused += 1
                #expect(error.code.kind == .invalidInput, "\(error.code.rawValue): \(error.message)")
                #expect(!error.message.isEmpty)
            }
        }
        // Most mutations break the document; the property is that none does more than that.
        #expect(refused > 30_000)
    }
}
