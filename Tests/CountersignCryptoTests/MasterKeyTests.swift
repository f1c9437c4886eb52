import CountersignCrypto
import Foundation
import Testing

@Suite("MasterKey")
struct MasterKeyTests {
    let bytes: [UInt8] = Array(100..<132)

    private func write(_ contents: [UInt8]) throws -> String {
        let path = try makeTemporaryDirectory() + "/master.key"
        try Data(contents).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: [
        "raw",
        "base64",
        "base64 with newline",
        "base64url unpadded",
        "hex lowercase",
        "hex uppercase with whitespace",
    ])
    func acceptedForms(form: String) throws {
        let base64 = Data(bytes).base64EncodedString()
        let contents: [UInt8] =
            switch form {
            case "raw": bytes
            case "base64": Array(base64.utf8)
            case "base64 with newline": Array("  \(base64)\r\n".utf8)
            case "base64url unpadded":
                Array(
                    base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                        .utf8
                )
            case "hex lowercase": Array(bytes.hexString.utf8)
            default: Array("\t\(bytes.hexString.uppercased())\n\n".utf8)
            }
        let key = try MasterKey.load(fromFile: write(contents))
        #expect(key == (try SymmetricKey(bytes: bytes)))
    }

    @Test(arguments: [
        Array([UInt8](repeating: 7, count: 16).hexString.utf8),
        Array("correct horse battery staple 123".utf8),
        Array(Data([UInt8](repeating: 1, count: 24)).base64EncodedString().utf8),
        [UInt8](repeating: 0x20, count: 16) + [UInt8](repeating: 0x0a, count: 16),
    ])
    func thirtyTwoCharactersOfTextAreNoRawKey(contents: [UInt8]) throws {
        #expect(contents.count == 32)
        let path = try write(contents)
        #expect(throws: CryptoError(.masterKeyInvalid, "")) { try MasterKey.load(fromFile: path) }
    }

    @Test(arguments: [
        "",
        "not a key",
        String(repeating: "a", count: 63),
        String(repeating: "a", count: 66),
        String(repeating: "g", count: 64),
        Data([UInt8](repeating: 1, count: 16)).base64EncodedString(),
        Data([UInt8](repeating: 1, count: 48)).base64EncodedString(),
    ])
    func invalidContentsAreRefused(text: String) throws {
        let path = try write(Array(text.utf8))
        #expect(throws: CryptoError(.masterKeyInvalid, "")) { try MasterKey.load(fromFile: path) }
    }

    @Test func rawBytesOfTheWrongLengthAreRefused() throws {
        for count in [31, 33] {
            let path = try write([UInt8](repeating: 0xff, count: count))
            #expect(throws: CryptoError(.masterKeyInvalid, "")) { try MasterKey.load(fromFile: path) }
        }
    }

    @Test func hugeFileIsRefusedUnread() throws {
        let path = try write([UInt8](repeating: 0x41, count: 100_000))
        #expect(throws: CryptoError(.masterKeyInvalid, "")) { try MasterKey.load(fromFile: path) }
    }

    @Test func missingFile() throws {
        let path = try makeTemporaryDirectory() + "/absent.key"
        #expect(throws: CryptoError(.masterKeyMissing, "")) { try MasterKey.load(fromFile: path) }
    }

    @Test func directoryIsNotAKey() throws {
        let path = try makeTemporaryDirectory()
        #expect(throws: CryptoError(.masterKeyInvalid, "")) { try MasterKey.load(fromFile: path) }
    }

    @Test func errorsNeverContainTheKey() throws {
        let text = bytes.hexString + "zz"
        let path = try write(Array(text.utf8))
        do {
            _ = try MasterKey.load(fromFile: path)
            Issue.record("loaded an invalid key")
        } catch {
            #expect(!String(reflecting: error).contains(bytes.hexString))
        }
    }

    @Test func generateWritesBase64WithMode0600() throws {
        let path = try makeTemporaryDirectory() + "/new.key"
        let key = try MasterKey.generate(toFile: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        #expect(Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines))?.count == 32)
        #expect(try MasterKey.load(fromFile: path) == key)
    }

    @Test func generateNeverOverwrites() throws {
        let path = try makeTemporaryDirectory() + "/existing.key"
        let original = try MasterKey.generate(toFile: path)
        #expect(throws: CryptoError(.masterKeyExists, "")) { try MasterKey.generate(toFile: path) }
        #expect(try MasterKey.load(fromFile: path) == original)
    }

    @Test func generateIntoMissingDirectoryFails() throws {
        let path = try makeTemporaryDirectory() + "/no/such/dir/master.key"
        #expect(throws: CryptoError(.masterKeyMissing, "")) { try MasterKey.generate(toFile: path) }
    }
}
