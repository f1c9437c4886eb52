import CountersignCrypto
import Testing

@Suite("AES-256-GCM envelope")
struct AESGCMTests {
    let key = try! SymmetricKey(bytes: Array(0..<32))
    let aad = Array("tenant-42".utf8)

    // Computed independently with Python's `cryptography`:
    // 0x01 | nonce | AESGCM(key).encrypt(nonce, plaintext, b"\x01" + aad)
    @Test func opensAKnownAnswer() throws {
        let sealed = [UInt8](hex: "016465666768696a6b6c6d6e6f2b74ab080d8c24ed570531c8a900098f27b6ebe4ecaf92e5319a911be7dbbbf4c360")
        #expect(try AESGCM.open(sealed, key: key, associatedData: aad) == Array("countersign secret".utf8))
        let empty = [UInt8](hex: "016465666768696a6b6c6d6e6f96454fb7ccb36e5063756e0ca308bd22")
        #expect(try AESGCM.open(empty, key: key, associatedData: []) == [])
    }

    @Test(arguments: [0, 1, 15, 16, 17, 1000, 70_000])
    func roundTrip(length: Int) throws {
        let plaintext = try SecureRandom.bytes(length)
        let sealed = try AESGCM.seal(plaintext, key: key, associatedData: aad)
        #expect(sealed.count == length + AESGCM.overhead)
        #expect(sealed.first == AESGCM.formatVersion)
        #expect(try AESGCM.open(sealed, key: key, associatedData: aad) == plaintext)
    }

    @Test func noncesAreFresh() throws {
        let plaintext = Array("same".utf8)
        let first = try AESGCM.seal(plaintext, key: key, associatedData: aad)
        let second = try AESGCM.seal(plaintext, key: key, associatedData: aad)
        #expect(first[1..<13] != second[1..<13])
        #expect(first != second)
    }

    @Test func everyAlteredByteIsDetected() throws {
        let sealed = try AESGCM.seal(Array("secret value".utf8), key: key, associatedData: aad)
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(throws: CryptoError(.decryptionFailed, "")) { try AESGCM.open(tampered, key: key, associatedData: aad) }
        }
    }

    @Test func wrongAssociatedDataIsRefused() throws {
        let sealed = try AESGCM.seal(Array("secret".utf8), key: key, associatedData: aad)
        #expect(throws: CryptoError(.decryptionFailed, "")) { try AESGCM.open(sealed, key: key, associatedData: Array("tenant-43".utf8)) }
        #expect(throws: CryptoError(.decryptionFailed, "")) { try AESGCM.open(sealed, key: key, associatedData: []) }
    }

    @Test func wrongKeyIsRefused() throws {
        let sealed = try AESGCM.seal(Array("secret".utf8), key: key, associatedData: aad)
        #expect(throws: CryptoError(.decryptionFailed, "")) { try AESGCM.open(sealed, key: SymmetricKey.random(), associatedData: aad) }
    }

    @Test(arguments: [0, 1, 13, AESGCM.overhead - 1])
    func truncatedValuesAreRefused(length: Int) throws {
        let sealed = try AESGCM.seal([], key: key, associatedData: aad)
        #expect(throws: CryptoError(.decryptionFailed, "")) { try AESGCM.open(Array(sealed.prefix(length)), key: key, associatedData: aad) }
    }

    @Test func errorsNeverContainThePlaintext() throws {
        let secret = "hunter2-very-secret"
        let sealed = try AESGCM.seal(Array(secret.utf8), key: key, associatedData: aad)
        do {
            _ = try AESGCM.open(sealed, key: key, associatedData: [])
            Issue.record("opened with the wrong associated data")
        } catch {
            #expect(!String(reflecting: error).contains(secret))
            #expect(error.detail == nil)
        }
    }

    @Test func envelopeBindsDataKeyToTenantAndSecretToRow() throws {
        let master = try SymmetricKey.random()
        let dataKey = try SymmetricKey.random()
        let tenant = Array("tenant-7".utf8)
        let wrapped = try AESGCM.seal(dataKey, under: master, associatedData: tenant)
        #expect(wrapped.count == SymmetricKey.byteCount + AESGCM.overhead)
        #expect(try AESGCM.openKey(wrapped, under: master, associatedData: tenant) == dataKey)
        #expect(throws: CryptoError(.decryptionFailed, "")) { try AESGCM.openKey(wrapped, under: master, associatedData: Array("tenant-8".utf8)) }

        let row1 = tenant + Array("/row-1".utf8)
        let row2 = tenant + Array("/row-2".utf8)
        let secret = try AESGCM.seal(Array("p@ssw0rd".utf8), key: dataKey, associatedData: row1)
        #expect(try AESGCM.open(secret, key: dataKey, associatedData: row1) == Array("p@ssw0rd".utf8))
        // A ciphertext copied to another row does not open there.
        #expect(throws: CryptoError(.decryptionFailed, "")) { try AESGCM.open(secret, key: dataKey, associatedData: row2) }
        // A sealed value that is not a key is refused as one.
        #expect(throws: CryptoError(.decryptionFailed, "")) { try AESGCM.openKey(secret, under: dataKey, associatedData: row1) }
    }

    @Test func oversizedPlaintextIsRefused() throws {
        let plaintext = [UInt8](repeating: 0, count: AESGCM.maximumPlaintextByteCount + 1)
        #expect(throws: CryptoError(.invalidArgument, "")) { try AESGCM.seal(plaintext, key: key, associatedData: []) }
    }
}

@Suite("SymmetricKey")
struct SymmetricKeyTests {
    @Test(arguments: [0, 16, 31, 33, 64])
    func onlyThirtyTwoBytes(length: Int) {
        #expect(throws: CryptoError(.invalidKeyLength, "")) { try SymmetricKey(bytes: [UInt8](repeating: 1, count: length)) }
    }

    @Test func printingNeverShowsTheBytes() throws {
        let key = try SymmetricKey(bytes: [UInt8](repeating: 0xab, count: 32))
        var dumped = ""
        dump(key, to: &dumped)
        for text in [String(describing: key), String(reflecting: key), "\(key)", dumped] {
            #expect(!text.contains("171"))
            #expect(!text.lowercased().contains("ab, "))
            #expect(text.contains("SymmetricKey"))
        }
    }

    @Test func equalityComparesBytes() throws {
        let bytes = try SecureRandom.bytes(32)
        #expect(try SymmetricKey(bytes: bytes) == SymmetricKey(bytes: bytes))
        #expect(try SymmetricKey.random() != SymmetricKey.random())
        #expect(try SymmetricKey(bytes: bytes).withUnsafeBytes { Array($0) } == bytes)
    }
}
