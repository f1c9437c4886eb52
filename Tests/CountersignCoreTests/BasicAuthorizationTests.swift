import CountersignCore
import Foundation
import Testing

@Suite("Basic authorization")
struct BasicAuthorizationTests {
    @Test(
        "RFC 7617 examples and base64 padding",
        arguments: [
            ("Aladdin", "open sesame", "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="),
            ("test", "123£", "Basic dGVzdDoxMjPCow=="),
            ("", "", "Basic Og=="),
            ("a", "", "Basic YTo="),
            ("ab", "", "Basic YWI6"),
            ("user", "pa:ss:word", "Basic dXNlcjpwYTpzczp3b3Jk"),
        ])
    func encodes(user: String, password: String, expected: String) throws {
        #expect(try BasicAuthorization.headerValue(user: user, password: password) == expected)
    }

    /// `charset="UTF-8"` asks for NFC (RFC 7617 §2.1): a password stored decomposed goes as the
    /// composed `é` the server expects; without the parameter, the bytes go as stored.
    @Test func charsetUTF8NormalizesToNFC() throws {
        let decomposed = "e\u{301}t\u{E9}"
        let composed = Array("ét\u{E9}".utf8)
        #expect(Array(decomposed.utf8) != composed)
        func pair(_ header: String) -> [UInt8] {
            Array(Data(base64Encoded: String(header.dropFirst("Basic ".count)))!)
        }
        #expect(pair(try BasicAuthorization.headerValue(user: "Zoe\u{308}", password: decomposed, charsetUTF8: true)) == Array("Zo\u{EB}:".utf8) + composed)
        #expect(pair(try BasicAuthorization.headerValue(user: "u", password: decomposed)) == Array("u:".utf8) + Array(decomposed.utf8))
    }

    @Test(
        "refuses what RFC 7617 forbids",
        arguments: [
            ("ali:baba", "x", CountersignError.Code.invalidBasicUser),
            ("ali\u{00}", "x", .invalidBasicUser),
            ("ali\u{7F}", "x", .invalidBasicUser),
            ("ali", "x\r\ny", .invalidBasicPassword),
            ("ali", "\u{1B}", .invalidBasicPassword),
        ])
    func refuses(user: String, password: String, code: CountersignError.Code) {
        let error = #expect(throws: CountersignError.self) { try BasicAuthorization.headerValue(user: user, password: password) }
        #expect(error?.code == code)
        #expect(error?.message.contains(password) == false || password.isEmpty)
    }

    @Test func agreesWithFoundationsBase64OnRandomInput() throws {
        var random = ChallengeSeededGenerator(seed: 7617)
        for length in 0..<200 {
            let password = String((0..<length).map { _ in Character(Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &random))) }) + "é"
            let expected = "Basic " + Data("u:\(password)".utf8).base64EncodedString()
            #expect(try BasicAuthorization.headerValue(user: "u", password: password) == expected)
        }
    }
}
