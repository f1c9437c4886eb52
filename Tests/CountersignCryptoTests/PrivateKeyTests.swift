import CountersignCrypto
import CountersignTestSupport
import Foundation
import Testing

@Suite("PrivateKey")
struct PrivateKeyTests {
    let pki: TestPKI

    init() async throws {
        pki = try await TestPKI.shared()
    }

    private func convert(_ keyPath: String, _ arguments: [String]) throws -> String {
        String(decoding: try TestPKI.runOpenSSL(arguments + ["-in", keyPath]), as: UTF8.self)
    }

    @Test func readsPKCS8ECAndRSA() throws {
        let ec = try PrivateKey(pem: pki.server.keyPEM)
        #expect(ec.algorithm == .ec(curve: "prime256v1"))
        #expect(ec.matches(pki.server.certificate))
        #expect(!ec.matches(pki.otherName.certificate))

        let rsa = try PrivateKey(pem: pki.clientB.keyPEM)
        #expect(rsa.algorithm == .rsa(bits: 2048))
        #expect(rsa.matches(pki.clientB.certificate))
        #expect(!rsa.matches(pki.clientA.certificate))
    }

    @Test func pkcs8DERRoundTripMatchesOpenSSL() throws {
        for leaf in [pki.server, pki.clientB.leaf] {
            let key = try PrivateKey(pem: leaf.keyPEM)
            let der = try key.pkcs8DER
            // The key files are PKCS#8 PEM already: their base64 body is the same DER.
            let body = leaf.keyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
            #expect(der == Array(Data(base64Encoded: body)!))
            let again = try PrivateKey(pkcs8DER: der)
            #expect(again.matches(leaf.certificate))
            #expect(again.algorithm == key.algorithm)
        }
    }

    @Test func readsTraditionalForms() throws {
        let ec = try convert(pki.server.keyPath, ["ec"])
        #expect(ec.contains("BEGIN EC PRIVATE KEY"))
        #expect(try PrivateKey(pem: ec).matches(pki.server.certificate))
        let rsa = try convert(pki.clientB.leaf.keyPath, ["rsa", "-traditional"])
        #expect(rsa.contains("BEGIN RSA PRIVATE KEY"))
        #expect(try PrivateKey(pem: rsa).matches(pki.clientB.certificate))
    }

    @Test(arguments: ["pkcs8", "traditional"])
    func encryptedKeys(form: String) throws {
        let pem =
            form == "pkcs8"
            ? try convert(pki.server.keyPath, ["pkey", "-aes256", "-passout", "pass:correct horse"])
            : try convert(pki.server.keyPath, ["ec", "-aes256", "-passout", "pass:correct horse"])
        #expect(pem.contains(form == "pkcs8" ? "ENCRYPTED PRIVATE KEY" : "Proc-Type: 4,ENCRYPTED"))
        #expect(try PrivateKey(pem: pem, passphrase: "correct horse").matches(pki.server.certificate))
        #expect(throws: CryptoError(.privateKeyBadPassphrase, "")) { try PrivateKey(pem: pem, passphrase: "wrong horse") }
        #expect(throws: CryptoError(.privateKeyPassphraseRequired, "")) { try PrivateKey(pem: pem) }
        do {
            _ = try PrivateKey(pem: pem, passphrase: "wrong horse")
        } catch {
            #expect(!String(reflecting: error).contains("horse"))
            #expect(error.detail == nil)
        }
    }

    @Test func skipsACertificateBeforeTheKey() throws {
        #expect(try PrivateKey(pem: pki.server.certificatePEM + pki.server.keyPEM).matches(pki.server.certificate))
    }

    @Test(arguments: ["", "garbage", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"])
    func malformedPEM(text: String) {
        #expect(throws: CryptoError(.malformedPrivateKey, "")) { try PrivateKey(pem: text) }
    }

    @Test func certificateIsNotAKey() {
        #expect(throws: CryptoError(.malformedPrivateKey, "")) { try PrivateKey(pem: pki.server.certificatePEM) }
    }

    @Test func malformedPKCS8DER() throws {
        let der = try PrivateKey(pem: pki.server.keyPEM).pkcs8DER
        #expect(throws: CryptoError(.malformedPrivateKey, "")) { try PrivateKey(pkcs8DER: []) }
        #expect(throws: CryptoError(.malformedPrivateKey, "")) { try PrivateKey(pkcs8DER: Array(der.dropLast())) }
        #expect(throws: CryptoError(.malformedPrivateKey, "")) { try PrivateKey(pkcs8DER: der + [0]) }
        #expect(throws: CryptoError(.malformedPrivateKey, "")) { try PrivateKey(pkcs8DER: pki.server.certificateDER) }
    }

    @Test(arguments: [
        ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"],
        ["genpkey", "-algorithm", "ED25519"],
        ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp256k1"],
    ])
    func unsupportedKeys(arguments: [String]) throws {
        let pem = String(decoding: try TestPKI.runOpenSSL(arguments), as: UTF8.self)
        #expect(throws: CryptoError(.unsupportedPrivateKey, "")) { try PrivateKey(pem: pem) }
    }

    @Test func printingNeverShowsKeyMaterial() throws {
        let key = try PrivateKey(pem: pki.server.keyPEM)
        let body = pki.server.keyPEM.split(separator: "\n")[1]
        var dumped = ""
        dump(key, to: &dumped)
        for text in [String(describing: key), String(reflecting: key), dumped] {
            #expect(!text.contains(body.prefix(16)))
            #expect(text.contains("redacted") || text.contains("algorithm"))
        }
    }
}
