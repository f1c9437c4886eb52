import CountersignCore
import Foundation
import Testing

@Suite("Identifiers and input checks")
struct IdentifierAndValidationTests {
    @Test("UUID text is Foundation's in lower case, and reads back in either case")
    func uuidTextMatchesFoundation() {
        for _ in 0..<1000 {
            let id = UUID()
            #expect(id.text == id.uuidString.lowercased())
            #expect(UUID(text: id.uuidString) == id)
            #expect(UUID(text: id.uuidString.lowercased()) == id)
        }
    }

    @Test(
        "malformed UUID text is refused as Foundation refuses it",
        arguments: [
            "", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F0",
            "E621E1F8C36C-495A-93FC-0C247A3E6E5F0", "E621E1F8-C36C-495A-93FC-0C247A3E6E5G", "E621E1F8_C36C-495A-93FC-0C247A3E6E5F",
            "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}", " E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "É621E1F8-C36C-495A-93FC-0C247A3E6E5F",
        ])
    func malformedUUIDText(text: String) {
        #expect(UUID(text: text) == nil)
        #expect(UUID(uuidString: text) == nil)
        #expect(!UUIDText.isValid(text))
    }

    @Test("random UUIDs are version 4, RFC 9562 variant, and differ")
    func randomUUIDs() {
        var seen = Set<UUID>()
        for _ in 0..<1000 {
            let id = UUID.random()
            let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4)
            #expect(bytes[8] >> 6 == 0b10)
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }

    @Test("time-ordered UUIDs are version 7, carry their millisecond, and sort by it")
    func timeOrderedUUIDs() {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123)
        let id = UUID.timeOrdered(at: date)
        let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
        #expect(bytes.prefix(6).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } == 1_795_000_000_123)
        #expect(bytes[6] >> 4 == 7)
        #expect(bytes[8] >> 6 == 0b10)
        let later = UUID.timeOrdered(at: date.addingTimeInterval(0.002))
        #expect(id.text < later.text)
        #expect(UUID.timeOrdered(at: date) != id)
    }

    @Test("API key tokens: the secret may hold underscores; anything else malformed is not a key")
    func apiKeyTokens() throws {
        let secret = "ab_cd-" + String(repeating: "x", count: 40)
        let token = try #require(APIKeyToken(parsing: "csk_abcdefghijkm_" + secret))
        #expect(token.lookupID == "abcdefghijkm")
        #expect(token.secret == secret)
        #expect(APIKeyToken(parsing: Substring("csk_abcdefghijkm_" + secret)) == token)
        let long = String(repeating: "y", count: 257)
        for text in [
            "", "csk", "csk_abcdefghijkm", "csk_abcdefghijkm_short", "csx_abcdefghijkm_" + secret, "csk_abcdefghijk_" + secret,
            "csk_abcdefghijkl_" + secret, "csk__" + secret, "csk_abcdefghijkm_" + long,
        ] {
            #expect(APIKeyToken(parsing: text) == nil, "\(text)")
        }
    }

    @Test("names and texts: lengths count Unicode scalars, control characters are refused, other Unicode is fine")
    func namesAndTexts() throws {
        // As PostgreSQL's char_length counts: a letter and its combining mark are two.
        #expect(try Validation.name("é" + String(repeating: "e", count: 199), field: "f") != "")
        #expect(try Validation.name(String(repeating: "e\u{301}", count: 100), field: "f") != "")
        #expect(throws: CountersignError.self) { try Validation.name(String(repeating: "e\u{301}", count: 101), field: "f") }
        #expect(throws: CountersignError.self) { try Validation.name("e" + String(repeating: "\u{301}", count: 50_000), field: "f") }
        #expect(throws: CountersignError.self) { try Validation.name(String(repeating: "e", count: 201), field: "f") }
        #expect(throws: CountersignError.self) { try Validation.name("", field: "f") }
        #expect(throws: CountersignError.self) { try Validation.name("  \u{3000}", field: "f") }
        #expect(try Validation.name(" a ", field: "f") == " a ")
        for control in ["\u{0}", "\u{1F}", "\u{7F}", "\u{85}", "\u{9F}"] {
            #expect(throws: CountersignError.self) { try Validation.name("a\(control)b", field: "f") }
            #expect(throws: CountersignError.self) { try Validation.text("a\(control)b", field: "f", maxLength: 10) }
        }
        for fine in ["\u{A0}", "\u{200B}", "日本語", "🙂"] {
            #expect(try Validation.text("a\(fine)b", field: "f", maxLength: 10) != "")
        }
    }

    @Test("protection-space hosts: whitespace (ASCII or not), slashes, stray brackets and empty labels are refused")
    func hosts() {
        func space(_ host: String) -> ProtectionSpace {
            ProtectionSpace(host: host, port: 443, protocolName: "https", authenticationMethod: .httpBasic)
        }
        for bad in ["a b", "a\tb", "a/b", "a\u{A0}b", "a\u{3000}b", "ä b", "ä/b", "[", "a]b", "[::1", "[]", "[v.x]", "[::1]:443", "a..b", ".a.com", "."] {
            #expect(throws: CountersignError.self, "\(bad)") { try space(bad).validate() }
        }
        for good in ["intranet.example.com", "bücher.example", "127.0.0.1", "[::1]", "[fe80::1%25en0]", "[::ffff:10.0.0.1]", "example.com."] {
            #expect(throws: Never.self) { try space(good).validate() }
        }
    }

    @Test("a space's key fits an index entry: the quick bound never lets a key too long through")
    func keySizes() {
        let parts = ["", "a", "|", "%", "İ", "ẞ", "🌍", "a|%🌍İ"]
        for _ in 0..<2000 {
            func text(_ count: Int) -> String { (0..<Int.random(in: 0...count)).map { _ in parts.randomElement()! }.joined() }
            let space = ProtectionSpace(
                host: text(80),
                port: 443,
                protocolName: text(12),
                realm: text(400),
                authenticationMethod: [.httpBasic, .default, .ntlm, AuthenticationMethod(rawValue: text(60))].randomElement()!
            )
            #expect(space.keyFits == (space.key.utf8.count <= ProtectionSpace.maximumKeyBytes), "\(space.key.utf8.count)")
        }
    }

    /// The key escapes the method as it does the other parts: a custom method of `|` takes three
    /// bytes a character, which the quick bound must count too.
    @Test("a method the key escapes is counted at three bytes a character")
    func escapedMethodIsCounted() {
        let space = ProtectionSpace(
            host: "a",
            port: 443,
            realm: String(repeating: "|", count: 599),
            authenticationMethod: AuthenticationMethod(rawValue: String(repeating: "|", count: 200))
        )
        #expect(space.key.utf8.count > ProtectionSpace.maximumKeyBytes)
        #expect(!space.keyFits)
        #expect(throws: CountersignError.self) { try space.validate() }
    }
}
