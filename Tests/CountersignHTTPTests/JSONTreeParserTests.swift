import CountersignCore
@testable import CountersignHTTP
import Foundation
import Testing

/// The request-body parser takes RFC 8259 JSON and nothing else.
@Suite("Request JSON: syntax")
struct JSONTreeParserTests {
    /// The core's JSON value (the contract checker in this target has its own `JSONValue`).
    typealias Payload = CountersignCore.JSONValue

    /// The code and message a body gets when decoded as `type`.
    static func outcome<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) -> (code: String, message: String)? {
        do {
            _ = try JSONBody.decode(type, from: bytes)
            return nil
        } catch let error as CountersignError {
            return (error.code.rawValue, error.message)
        } catch {
            Issue.record("not a CountersignError: \(error)")
            return ("?", "\(error)")
        }
    }

    static func value(_ text: String) throws -> Payload {
        try JSONBody.decode(Payload.self, from: Array(text.utf8))
    }

    @Test(arguments: [
        #"{"a": [1, -2.5e3, "s", true, false, null, {}, [], {"b": {"c": [[]]}}], "d": 0, "e": -0.0, "f": 1E+2}"#,
        "  \n\t\r{ }  \n", "[ ]", "1", "-1", "0.5", #""text""#, "true", "false", "null", "[[1, [2, [3]]], {}]",
        #"{"": "empty name", "ünï": "cödé", "esc\"aped": "a\\b\/c\b\f\n\r\t"}"#,
        #"["\u00e9", "\ud83d\ude00", "\u0001", "\uFFFF", "é😀", "\u007f"]"#,
    ])
    func validDocumentsReadAsFoundationReadThem(text: String) throws {
        let expected = try JSONDecoder().decode(Payload.self, from: Data(text.utf8))
        #expect(try Self.value(text) == expected)
    }

    @Test func valuesOfEveryKind() throws {
        let value = try Self.value(#"{"s": "x\ty", "i": 9223372036854775807, "n": -9223372036854775808, "d": 2.5, "big": 9223372036854775808, "b": true, "z": null, "a": [false, {}]}"#)
        let expected: Payload = [
            "s": "x\ty", "i": .integer(.max), "n": .integer(.min), "d": .number(2.5), "big": .number(9.223372036854775808e18),
            "b": true, "z": nil, "a": [false, [:]],
        ]
        #expect(value == expected)
    }

    @Test func escapesAndSurrogatePairsAreDecoded() throws {
        #expect(try Self.value(#""\u00e9\u00E9""#) == "éé")
        #expect(try Self.value(#""\ud83d\ude00 \uD83D\uDE00""#) == "😀 😀")
        #expect(try Self.value(#""\"\\\/\b\f\n\r\t""#) == "\"\\/\u{8}\u{c}\n\r\t")
        #expect(try Self.value(#""a\u0001b""#) == "a\u{1}b")
        // A member name with escapes is the name it spells.
        let challenge = try JSONBody.decode(Challenge.self, from: Array(#"{"t\u0061skId": "t", "protectionSpace": {"host": "h\u00e9", "port": 1, "authenticationMethod": "x"}}"#.utf8))
        #expect(challenge.taskId == "t")
        #expect(challenge.protectionSpace.host == "hé")
    }

    /// Every class of malformed body, and the words its message must carry.
    static let malformed: [(text: String, reason: String)] = [
        ("{", "ends"), ("{} x", "text after"), ("{},", "text after"), ("{\"a\": 1}\u{0}", "text after"), ("   ", "ends where a value"),
        (#"{"a": 1,}"#, "trailing comma"), ("[1,]", "trailing comma"), ("[1, ]", "trailing comma"), ("[,1]", "missing"), ("{,}", "member name"),
        (#"{"a" 1}"#, "':'"), (#"{"a": 1 "b": 2}"#, "','"), ("[1 2]", "','"), (#"{"a": }"#, "missing"), ("{a: 1}", "member name"), ("{'a': 1}", "member name"),
        ("01", "leading zero"), ("-01", "leading zero"), ("[00]", "leading zero"), ("-", "no digits"), ("1.", "after '.'"), (".5", "unexpected"),
        ("+1", "unexpected"), ("1e", "exponent"), ("1e+", "exponent"), ("NaN", "unexpected"), ("Infinity", "unexpected"), ("-Infinity", "no digits"),
        ("tru", "unexpected"), ("nul", "unexpected"), ("True", "unexpected"), ("nulls", "text after"),
        ("{/* comment */}", "member name"), (#"{"a": 1} // comment"#, "text after"), ("# comment\n{}", "unexpected"),
        (#""\x""#, "invalid escape"), (#""\u00G9""#, "four hex digits"), (#""\u12""#, "four hex digits"), (#""\'""#, "invalid escape"),
        (#""a\u0000b""#, "U+0000"), (#"{"\u0000": 1}"#, "U+0000"), (#""\ud800""#, "surrogate"), (#""\udc00""#, "surrogate"), (#""\ud800\u0041""#, "surrogate"), (#""\ud800x""#, "surrogate"), (#""\ud800\ud800""#, "surrogate"),
        ("\"a\tb\"", "control character"), ("\"a\nb\"", "control character"), ("\"a\u{1f}b\"", "control character"), ("\"unterminated", "ends inside a string"),
        (#"{"a": 1, "a": 2}"#, "'a' appears twice"), (#"{"a": 1, "\u0061": 2}"#, "'a' appears twice"),
        (#"{"x": [{"k": 1}, {"j": 0, "k": 1, "k": 2}]}"#, "'x[1].k' appears twice"),
        (String(repeating: "[", count: 129) + String(repeating: "]", count: 129), "deeper than 128"),
        (String(repeating: #"{"a":"#, count: 129) + "1" + String(repeating: "}", count: 129), "deeper than 128"),
    ]

    @Test(arguments: malformed)
    func malformedBodiesAreMalformedJSON(text: String, reason: String) throws {
        let failure = try #require(Self.outcome(Payload.self, Array(text.utf8)))
        #expect(failure.code == "malformed_json", "\(text)")
        #expect(failure.message.hasPrefix("the request body is not valid JSON: "), "\(text)")
        #expect(failure.message.contains(reason), "\(text): \(failure.message)")
        // Whatever the type: JSON is checked before anything is decoded.
        #expect(Self.outcome(Challenge.self, Array(text.utf8))?.code == "malformed_json", "\(text)")
    }

    @Test(arguments: [
        [0xFF], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xC3], [0x80], [0xE2, 0x82],
    ] as [[UInt8]])
    func invalidUTF8InAStringIsMalformed(bytes: [UInt8]) throws {
        let failure = try #require(Self.outcome(Payload.self, Array(#"{"a": "x"#.utf8) + bytes + Array(#"y"}"#.utf8)))
        #expect(failure.code == "malformed_json")
        #expect(failure.message.contains("invalid UTF-8"))
    }

    @Test func validMultiByteUTF8IsKept() throws {
        #expect(try Self.value("\"\u{7FF}\u{800}\u{FFFD}\u{10000}\u{10FFFF}\"") == .string("\u{7FF}\u{800}\u{FFFD}\u{10000}\u{10FFFF}"))
    }

    @Test func aByteOrderMarkIsIgnoredAsFoundationDid() throws {
        #expect(try JSONBody.decode(Payload.self, from: [0xEF, 0xBB, 0xBF] + Array("{}".utf8)) == [:])
    }

    @Test func nestingUpTo128LevelsIsAccepted() throws {
        let deep = String(repeating: "[", count: 128) + String(repeating: "]", count: 128)
        #expect(try Self.value(deep).depth == 128)
    }

    @Test func duplicateNamesInLargeObjectsAreFound() throws {
        let members = (0..<5000).map { #""h\#($0)": "v""# } + [#""h4321": "again""#]
        let failure = try #require(Self.outcome([String: String].self, Array("{\(members.joined(separator: ","))}".utf8)))
        #expect(failure.code == "malformed_json")
        #expect(failure.message.contains("'h4321' appears twice"))
        // Without the repeat, all 5000 decode.
        let unique = try JSONBody.decode([String: String].self, from: Array("{\(members.dropLast().joined(separator: ","))}".utf8))
        #expect(unique.count == 5000)
    }

    @Test func anEmptyBodyKeepsItsMessage() throws {
        let failure = try #require(Self.outcome(Payload.self, []))
        #expect(failure.code == "malformed_json")
        #expect(failure.message == "the request body is empty; send a JSON object")
    }
}
