import CountersignCrypto
import Testing

@Suite("SecureRandom")
struct RandomTests {
    @Test(arguments: [0, 1, 16, 32, 1000])
    func bytesHaveTheRequestedCount(count: Int) throws {
        #expect(try SecureRandom.bytes(count).count == count)
    }

    @Test func bytesDiffer() throws {
        #expect(try SecureRandom.bytes(32) != SecureRandom.bytes(32))
    }

    @Test(arguments: [-1, SecureRandom.maximumByteCount + 1])
    func outOfRangeCountIsRefused(count: Int) {
        #expect(throws: CryptoError(.invalidArgument, "")) { try SecureRandom.bytes(count) }
    }

    @Test(arguments: [(1, 2), (16, 22), (32, 43), (33, 44)])
    func tokenIsUnpaddedBase64URL(byteCount: Int, length: Int) throws {
        let token = try SecureRandom.token(byteCount: byteCount)
        #expect(token.count == length)
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        #expect(token.allSatisfy(alphabet.contains))
    }

    @Test func defaultTokenCarries256Bits() throws {
        let tokens = try (0..<100).map { _ in try SecureRandom.token() }
        #expect(tokens.allSatisfy { $0.count == 43 })
        #expect(Set(tokens).count == tokens.count)
    }

    @Test func passphraseIs24BytesOfBase64URL() throws {
        let passphrase = try SecureRandom.passphrase()
        #expect(passphrase.count == 32)
        #expect(passphrase.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        #expect(try passphrase != SecureRandom.passphrase())
    }
}
