import Foundation
import Testing

@testable import CountersignCrypto

@Suite("Base64 and hex")
struct EncodingTests {
    // RFC 4648 section 10.
    @Test(arguments: [
        ("", "", ""),
        ("f", "Zg==", "Zg"),
        ("fo", "Zm8=", "Zm8"),
        ("foo", "Zm9v", "Zm9v"),
        ("foob", "Zm9vYg==", "Zm9vYg"),
        ("fooba", "Zm9vYmE=", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy", "Zm9vYmFy"),
    ])
    func rfc4648Vectors(plain: String, standard: String, url: String) {
        let bytes = Array(plain.utf8)
        #expect(Base64.encode(bytes) == standard)
        #expect(Base64.encode(bytes, url: true) == url)
        #expect(Base64.decode(standard.utf8) == bytes)
        #expect(Base64.decode(url.utf8) == bytes)
    }

    @Test func matchesFoundationOnRandomBytes() throws {
        for count in 0..<70 {
            let bytes = try SecureRandom.bytes(count)
            let foundation = Data(bytes).base64EncodedString()
            #expect(Base64.encode(bytes) == foundation)
            #expect(Base64.decode(foundation.utf8) == bytes)
            let url = foundation.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
                of: "=",
                with: ""
            )
            #expect(Base64.encode(bytes, url: true) == url)
            #expect(Base64.decode(url.utf8) == bytes)
        }
    }

    @Test(arguments: ["Zg=", "Zg===", "Z", "Zm9v Yg==", "Zm9v\nYg==", "Zm+v_g==", "Zh==", "Zm9=", "Zg==Zg==", "@@@@", "=Zg="])
    func malformedBase64IsRefused(text: String) {
        #expect(Base64.decode(text.utf8) == nil)
    }

    @Test func hexRoundTrip() throws {
        let bytes = try SecureRandom.bytes(40)
        #expect(Hex.decode(bytes.hexString.utf8) == bytes)
        #expect(Hex.decode(bytes.hexString.uppercased().utf8) == bytes)
        #expect(Hex.decode("0g".utf8) == nil)
        #expect(Hex.decode("abc".utf8) == nil)
    }
}
