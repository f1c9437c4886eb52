import CountersignCrypto
import CountersignTestSupport
import Foundation
import Testing

@Suite("ClientIdentity and PKCS#12")
struct ClientIdentityTests {
    let pki: TestPKI

    init() async throws {
        pki = try await TestPKI.shared()
    }

    private func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = try makeTemporaryDirectory() + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    // MARK: PEM

    @Test func fromPEM() throws {
        let identity = try ClientIdentity(privateKeyPEM: pki.clientA.keyPEM, certificateChainPEM: pki.clientA.chainPEM)
        #expect(identity.certificate == pki.clientA.certificate)
        #expect(identity.chain == [pki.clientCAA.certificate])
        #expect(identity.privateKey.algorithm == .ec(curve: "prime256v1"))
        #expect(identity.certificateChainPEM == pki.clientA.chainPEM)
    }

    @Test func leafIsFoundWhereverItIsInTheChainText() throws {
        let identity = try ClientIdentity(
            privateKeyPEM: pki.server.keyPEM,
            certificateChainPEM: pki.rootCA.certificatePEM + pki.server.certificatePEM + pki.intermediateCA.certificatePEM
        )
        #expect(identity.certificate == pki.server.certificate)
        #expect(identity.chain == [pki.intermediateCA.certificate, pki.rootCA.certificate])
    }

    @Test func aChainCertificateThatIssuedNothingOfTheChainIsRefused() throws {
        #expect(throws: CryptoError(.chainNotLinked, "")) {
            try ClientIdentity(privateKeyPEM: pki.clientA.keyPEM, certificateChainPEM: pki.clientA.chainPEM + pki.clientCAB.certificatePEM)
        }
        // Issuers up to the root, in any order, are the chain.
        let full = try ClientIdentity(
            privateKeyPEM: pki.server.keyPEM,
            certificateChainPEM: pki.rootCA.certificatePEM + pki.server.certificatePEM + pki.intermediateCA.certificatePEM
        )
        #expect(full.chain.count == 2)
    }

    @Test func keyMismatch() throws {
        #expect(throws: CryptoError(.keyCertificateMismatch, "")) {
            try ClientIdentity(privateKeyPEM: pki.clientA.keyPEM, certificateChainPEM: pki.clientB.chainPEM)
        }
        #expect(throws: CryptoError(.keyCertificateMismatch, "")) {
            try ClientIdentity(privateKey: PrivateKey(pem: pki.clientB.keyPEM), certificate: pki.clientA.certificate)
        }
    }

    // MARK: PKCS#12 import

    @Test(arguments: ["a", "b", "expired"])
    func importsPKCS12MadeByOpenSSL(which: String) throws {
        let files = which == "a" ? pki.clientA : which == "b" ? pki.clientB : pki.expiredClient
        let identity = try ClientIdentity(pkcs12: files.pkcs12, password: files.password)
        #expect(identity.certificate == files.certificate)
        #expect(identity.chain == [files.issuer.certificate])
        #expect(try identity.privateKey.pkcs8DER == PrivateKey(pem: files.keyPEM).pkcs8DER)
    }

    @Test func badPassword() {
        #expect(throws: CryptoError(.pkcs12BadPassword, "")) { try ClientIdentity(pkcs12: pki.clientA.pkcs12, password: "wrong") }
        // The uploader chooses the MAC's iteration count, and so the cost of opening the file.
        // (The test PKI's files ask for OpenSSL's 2,048.)
        #expect(throws: CryptoError(.malformedPKCS12, "")) {
            try ClientIdentity(pkcs12: pki.clientA.pkcs12, password: pki.clientA.password, maximumIterations: 1000)
        }
        #expect(throws: CryptoError(.pkcs12BadPassword, "")) { try ClientIdentity(pkcs12: pki.clientA.pkcs12, password: "") }
    }

    /// The contents' own key derivations are the uploader's to choose too, and are checked
    /// before any runs: the MAC's 2,048 pass, the bags' 5,000 do not.
    @Test func encryptedContentsAskingTooMuchAreRefusedBeforeDecrypting() throws {
        let directory = try makeTemporaryDirectory()
        let leaf = pki.clientA.leaf
        try TestPKI.runOpenSSL([
            "pkcs12", "-export", "-inkey", leaf.keyPath, "-in", leaf.certificatePath, "-iter", "5000",
            "-passout", "pass:p", "-out", directory + "/costly.p12",
        ])
        let costly = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/costly.p12")))
        #expect(throws: CryptoError(.malformedPKCS12, "")) { try ClientIdentity(pkcs12: costly, password: "p", maximumIterations: 3000) }
        #expect(try ClientIdentity(pkcs12: costly, password: "p", maximumIterations: 5000).certificate == pki.clientA.certificate)

        // An encrypted PEM key past the limit is refused whatever the passphrase: a wrong one
        // would be found out only after the derivation.
        let pem = try TestPKI.runOpenSSL([
            "pkcs8", "-topk8", "-in", leaf.keyPath, "-v2", "aes-256-cbc", "-iter", String(ClientIdentity.maximumIterations + 1), "-passout", "pass:p",
        ])
        #expect(throws: CryptoError(.malformedPrivateKey, "")) { try PrivateKey(pem: String(decoding: pem, as: UTF8.self), passphrase: "wrong") }
    }

    /// RFC 7292's safeContentsBag nests bags, and PKCS12_parse decrypts a key bag found inside
    /// one: its key derivation is the uploader's to choose as much as a top-level bag's.
    @Test func keyBagNestedInSafeContentsIsCheckedToo() throws {
        let keyBag = try Self.shroudedKeyBag(pki.clientA.leaf, iterations: 5000)
        let safeContentsBag = DER.sequence(DER.oid(Self.pkcs12Bag + "06"), DER.explicit(DER.sequence(keyBag)))
        let nested = try Self.pkcs12(bags: [Self.certificateBag(pki.clientA.leaf), safeContentsBag])

        #expect(try ClientIdentity(pkcs12: nested, password: "p", maximumIterations: 5000).certificate == pki.clientA.certificate)
        #expect(throws: CryptoError(.malformedPKCS12, "")) { try ClientIdentity(pkcs12: nested, password: "p", maximumIterations: 3000) }
    }

    /// Each derivation under the cap is not enough: a file repeating an encrypted part would
    /// cost a derivation at the cap per copy. The parts together have a budget of two.
    @Test func repeatedEncryptedPartsShareOneBudget() throws {
        let keyBag = try Self.shroudedKeyBag(pki.clientA.leaf, iterations: 5000)
        let repeated = try Self.pkcs12(bags: [Self.certificateBag(pki.clientA.leaf), keyBag, keyBag, keyBag])
        #expect(throws: CryptoError(.malformedPKCS12, "")) { try ClientIdentity(pkcs12: repeated, password: "p", maximumIterations: 6000) }
        #expect(try ClientIdentity(pkcs12: repeated, password: "p", maximumIterations: 8000).certificate == pki.clientA.certificate)
    }

    static let pkcs12Bag = "2A864886F70D010C0A01"

    static func shroudedKeyBag(_ leaf: TestPKI.Leaf, iterations: Int) throws -> [UInt8] {
        let shroudedKey = try TestPKI.runOpenSSL([
            "pkcs8", "-topk8", "-in", leaf.keyPath, "-v2", "aes-256-cbc", "-iter", String(iterations), "-passout", "pass:p", "-outform", "DER",
        ])
        return DER.sequence(DER.oid(pkcs12Bag + "02"), DER.explicit(shroudedKey))
    }

    static func certificateBag(_ leaf: TestPKI.Leaf) -> [UInt8] {
        DER.sequence(
            DER.oid(pkcs12Bag + "03"),
            DER.explicit(DER.sequence(DER.oid("2A864886F70D01091601"), DER.explicit(DER.octets(leaf.certificate.derBytes))))
        )
    }

    /// A PKCS#12 file of `bags` in one unencrypted safe, with the MAC PKCS12_set_mac makes:
    /// HMAC-SHA256 under the PKCS#12 KDF's MAC key (id 3) of the password "p" as a BMPString
    /// ("p" and its terminator), 2,048 iterations.
    static func pkcs12(bags: [[UInt8]]) throws -> [UInt8] {
        let data = DER.oid("2A864886F70D010701")
        let authenticatedSafe = DER.sequence(DER.sequence(data, DER.explicit(DER.octets(DER.sequence(bags.flatMap { $0 })))))
        let salt = try SecureRandom.bytes(8)
        let keyText = try TestPKI.runOpenSSL([
            "kdf", "-keylen", "32", "-kdfopt", "digest:SHA256", "-kdfopt", "hexpass:00700000", "-kdfopt", "hexsalt:\(salt.hexString)",
            "-kdfopt", "iter:2048", "-kdfopt", "id:3", "PKCS12KDF",
        ])
        let macKey = [UInt8](hex: String(decoding: keyText, as: UTF8.self).filter(\.isHexDigit))
        let mac = HMAC.authenticationCode(.sha256, key: macKey, message: authenticatedSafe)
        let macData = DER.sequence(
            DER.sequence(DER.sequence(DER.oid("608648016503040201"), [0x05, 0x00]), DER.octets(mac)),
            DER.octets(salt),
            [0x02, 0x02, 0x08, 0x00]
        )
        return DER.sequence([0x02, 0x01, 0x03], DER.sequence(data, DER.explicit(DER.octets(authenticatedSafe))), macData)
    }

    @Test func garbageAndTruncation() {
        let p12 = pki.clientA.pkcs12
        for bytes in [
            [], Array("garbage".utf8), Array(p12.prefix(p12.count / 2)), Array(p12.dropLast()), p12 + [0], pki.clientA.certificate.derBytes,
        ] {
            #expect(throws: CryptoError(.malformedPKCS12, "")) { try ClientIdentity(pkcs12: bytes, password: pki.clientA.password) }
        }
    }

    @Test func errorsNeverContainThePassword() {
        do {
            _ = try ClientIdentity(pkcs12: pki.clientA.pkcs12, password: "s3cr3t-guess")
        } catch {
            #expect(!String(reflecting: error).contains("s3cr3t"))
        }
    }

    private func exportWithOpenSSL(_ options: [String]) throws -> [UInt8] {
        let a = pki.clientA
        return try TestPKI.runOpenSSL(
            ["pkcs12", "-export", "-inkey", a.leaf.keyPath, "-in", a.leaf.certificatePath, "-certfile", a.issuer.certificatePath] + options
        )
    }

    @Test func importsTripleDESWithSHA1MAC() throws {
        // As older Windows and macOS exports are.
        let p12 = try exportWithOpenSSL(["-keypbe", "PBE-SHA1-3DES", "-certpbe", "PBE-SHA1-3DES", "-macalg", "sha1", "-passout", "pass:pw"])
        #expect(try ClientIdentity(pkcs12: p12, password: "pw").certificate == pki.clientA.certificate)
        #expect(throws: CryptoError(.pkcs12BadPassword, "")) { try ClientIdentity(pkcs12: p12, password: "nope") }
    }

    @Test func refusesFilesWithoutMAC() throws {
        let p12 = try exportWithOpenSSL(["-nomac", "-passout", "pass:pw"])
        #expect(throws: CryptoError(.malformedPKCS12, "")) { try ClientIdentity(pkcs12: p12, password: "pw") }
    }

    @Test func importsWithEmptyPassword() throws {
        let p12 = try exportWithOpenSSL(["-passout", "pass:"])
        #expect(try ClientIdentity(pkcs12: p12, password: "").certificate == pki.clientA.certificate)
        #expect(throws: CryptoError(.pkcs12BadPassword, "")) { try ClientIdentity(pkcs12: p12, password: "x") }
    }

    @Test func certificatesOnlyIsMalformed() throws {
        let p12 = try TestPKI.runOpenSSL(["pkcs12", "-export", "-nokeys", "-in", pki.clientA.leaf.certificatePath, "-passout", "pass:pw"])
        #expect(throws: CryptoError(.malformedPKCS12, "")) { try ClientIdentity(pkcs12: p12, password: "pw") }
    }

    @Test func legacyRC2PKCS12IsRefusedClearly() throws {
        let a = pki.clientA
        let legacy = try TestPKI.runOpenSSL([
            "pkcs12", "-export", "-legacy", "-inkey", a.leaf.keyPath, "-in", a.leaf.certificatePath, "-passout", "pass:pw",
        ])
        #expect(throws: CryptoError(.pkcs12UnsupportedAlgorithm, "")) { try ClientIdentity(pkcs12: legacy, password: "pw") }
        #expect(throws: CryptoError(.pkcs12BadPassword, "")) { try ClientIdentity(pkcs12: legacy, password: "wrong") }
    }

    // MARK: PKCS#12 export

    @Test(arguments: ["a", "b"])
    func exportRoundTrip(which: String) throws {
        let files = which == "a" ? pki.clientA : pki.clientB
        let identity = try ClientIdentity(privateKeyPEM: files.keyPEM, certificateChainPEM: files.chainPEM)
        let passphrase = try SecureRandom.passphrase()
        let p12 = try identity.exportPKCS12(passphrase: passphrase, friendlyName: "Countersign \(which)")

        let again = try ClientIdentity(pkcs12: p12, password: passphrase)
        #expect(again.certificate == identity.certificate)
        #expect(again.chain == identity.chain)
        #expect(try again.privateKey.pkcs8DER == identity.privateKey.pkcs8DER)
        #expect(throws: CryptoError(.pkcs12BadPassword, "")) { try ClientIdentity(pkcs12: p12, password: passphrase + "x") }
    }

    @Test func exportIsReadableByTheOpenSSLCommand() throws {
        let identity = try ClientIdentity(pkcs12: pki.clientB.pkcs12, password: pki.clientB.password)
        let passphrase = try SecureRandom.passphrase()
        let path = try write(try identity.exportPKCS12(passphrase: passphrase, friendlyName: "fleet-client"), "export.p12")

        let info = String(
            decoding: try TestPKI.runOpenSSL(["pkcs12", "-in", path, "-passin", "pass:\(passphrase)", "-info", "-noenc"]),
            as: UTF8.self
        )
        #expect(info.contains("friendlyName: fleet-client"))
        #expect(info.contains(pki.clientB.certificate.pemString.split(separator: "\n")[1]))
        #expect(info.contains(pki.clientCAB.certificate.pemString.split(separator: "\n")[1]))
        #expect(info.contains("PRIVATE KEY"))

        // `-info` reports the algorithms on standard error; read them with `-nokeys -nocerts` there.
        let algorithms = try algorithmsReport(path: path, passphrase: passphrase)
        #expect(algorithms.contains("MAC: sha256"))
        #expect(algorithms.contains("PBES2, PBKDF2, AES-256-CBC"))
        #expect(!algorithms.contains("RC2"))
        #expect(!algorithms.contains("3DES"))

        // The key opens, and belongs to the certificate.
        let keyPEM = String(
            decoding: try TestPKI.runOpenSSL(["pkcs12", "-in", path, "-passin", "pass:\(passphrase)", "-nocerts", "-noenc"]),
            as: UTF8.self
        )
        #expect(try PrivateKey(pem: keyPEM).matches(pki.clientB.certificate))

        #expect(throws: TestPKIError.self) { try TestPKI.runOpenSSL(["pkcs12", "-in", path, "-passin", "pass:wrong", "-noout"]) }
    }

    @Test func exportRefusesAnEmptyPassphrase() throws {
        let identity = try ClientIdentity(pkcs12: pki.clientA.pkcs12, password: pki.clientA.password)
        #expect(throws: CryptoError(.invalidArgument, "")) { try identity.exportPKCS12(passphrase: "") }
    }

    // MARK: Acceptable issuers

    @Test func acceptableIssuers() throws {
        let a = try ClientIdentity(pkcs12: pki.clientA.pkcs12, password: pki.clientA.password)
        let b = try ClientIdentity(pkcs12: pki.clientB.pkcs12, password: pki.clientB.password)
        #expect(a.matchesAcceptableIssuers([]))
        #expect(a.matchesAcceptableIssuers([pki.clientCAA.subjectDER]))
        #expect(!a.matchesAcceptableIssuers([pki.clientCAB.subjectDER]))
        #expect(b.matchesAcceptableIssuers([pki.rootCA.subjectDER, pki.clientCAB.subjectDER]))
        #expect(!b.matchesAcceptableIssuers([[0x30, 0x00], Array("garbage".utf8)]))

        // The same name as a server may encode it: PrintableString instead of UTF8String.
        let printable = name([("2.5.4.10", "Countersign Tests"), ("2.5.4.3", "Countersign Test Client CA A")], stringTag: 0x13)
        #expect(printable != pki.clientCAA.subjectDER)
        #expect(a.matchesAcceptableIssuers([printable]))
        #expect(!b.matchesAcceptableIssuers([printable]))
    }

    @Test func identityDescriptionHidesTheKey() throws {
        let identity = try ClientIdentity(pkcs12: pki.clientA.pkcs12, password: pki.clientA.password)
        let text = String(describing: identity) + String(reflecting: identity)
        #expect(text.contains("Countersign Test Client A"))
        #expect(!text.contains(pki.clientA.keyPEM.split(separator: "\n")[1].prefix(16)))
    }

    // MARK: Helpers

    private func algorithmsReport(path: String, passphrase: String) throws -> String {
        let directory = try makeTemporaryDirectory()
        let script = "\(directory)/info.sh"
        try "#!/bin/sh\nexec \"\(TestPKI.opensslPath)\" pkcs12 -in \"$1\" -passin \"pass:$2\" -info -nokeys -nocerts 2>&1\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        return try ChildProcess.run("/bin/sh", [script, path, passphrase]).outputText
    }

    /// DER of a Name with one attribute per RDN, strings tagged `stringTag`.
    private func name(_ attributes: [(String, String)], stringTag: UInt8) -> [UInt8] {
        func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
            precondition(content.count < 128)
            return [tag, UInt8(content.count)] + content
        }
        func oid(_ dotted: String) -> [UInt8] {
            let arcs = dotted.split(separator: ".").map { UInt8($0)! }
            return tlv(0x06, [arcs[0] * 40 + arcs[1]] + arcs.dropFirst(2))
        }
        let rdns = attributes.flatMap { type, value in
            tlv(0x31, tlv(0x30, oid(type) + tlv(stringTag, Array(value.utf8))))
        }
        return tlv(0x30, rdns)
    }
}

/// Just enough DER to assemble PKCS#12 structures no tool writes.
private enum DER {
    static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        guard content.count >= 0x80 else { return [tag, UInt8(content.count)] + content }
        var length: [UInt8] = []
        var remaining = content.count
        while remaining > 0 {
            length.insert(UInt8(remaining & 0xff), at: 0)
            remaining >>= 8
        }
        return [tag, 0x80 | UInt8(length.count)] + length + content
    }

    static func sequence(_ elements: [UInt8]...) -> [UInt8] { element(0x30, elements.flatMap { $0 }) }
    static func explicit(_ content: [UInt8]) -> [UInt8] { element(0xA0, content) }
    static func octets(_ content: [UInt8]) -> [UInt8] { element(0x04, content) }
    static func oid(_ hex: String) -> [UInt8] { element(0x06, [UInt8](hex: hex)) }
}
