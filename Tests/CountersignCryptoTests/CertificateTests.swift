import CountersignCrypto
import CountersignTestSupport
import Foundation
import Testing

@Suite("Certificate")
struct CertificateTests {
    let pki: TestPKI

    init() async throws {
        pki = try await TestPKI.shared()
    }

    private func openssl(_ arguments: [String], input: [UInt8]? = nil) throws -> String {
        String(decoding: try TestPKI.runOpenSSL(arguments, standardInput: input), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func fieldsMatchTheOpenSSLCommandLine() throws {
        for path in [pki.server.certificatePath, pki.rootCA.certificatePath, pki.clientB.leaf.certificatePath, pki.wildcard.certificatePath] {
            let certificate = try Certificate(pem: String(contentsOfFile: path, encoding: .utf8))
            #expect(try "subject=" + certificate.subject == openssl(["x509", "-in", path, "-noout", "-subject", "-nameopt", "RFC2253"]))
            #expect(try "issuer=" + certificate.issuer == openssl(["x509", "-in", path, "-noout", "-issuer", "-nameopt", "RFC2253"]))
            let fingerprint = try openssl(["x509", "-in", path, "-noout", "-fingerprint", "-sha256"])
            #expect(
                fingerprint.split(separator: "=").last.map { $0.replacingOccurrences(of: ":", with: "").lowercased() }
                    == certificate.sha256Fingerprint
            )
            let serial = try openssl(["x509", "-in", path, "-noout", "-serial"])
            #expect(serial == "serial=" + certificate.serialNumberHex.uppercased())

            // The documented pipeline, step by step.
            let publicKey = try TestPKI.runOpenSSL(["x509", "-in", path, "-pubkey", "-noout"])
            let spki = try TestPKI.runOpenSSL(["pkey", "-pubin", "-outform", "der"], standardInput: publicKey)
            let digest = try TestPKI.runOpenSSL(["dgst", "-sha256", "-binary"], standardInput: spki)
            #expect(try openssl(["base64"], input: digest) == certificate.spkiSHA256Base64)
            #expect(Digest.hash(.sha256, spki) == Array(Data(base64Encoded: certificate.spkiSHA256Base64)!))
        }
    }

    @Test func subjectsIssuersAndNames() {
        #expect(pki.server.certificate.subject == "CN=localhost,O=Countersign Tests")
        #expect(pki.server.certificate.issuer == "CN=Countersign Test Intermediate CA,O=Countersign Tests")
        #expect(pki.server.certificate.issuerDER == pki.intermediateCA.subjectDER)
        #expect(pki.intermediateCA.certificate.issuerDER == pki.rootCA.subjectDER)
        #expect(pki.rootCA.certificate.issuerDER == pki.rootCA.subjectDER)
        #expect(pki.rootCA.subjectDER.first == 0x30)
        #expect(pki.rootCA.subjectDER != pki.clientCAA.subjectDER)
    }

    @Test func caFlag() {
        #expect(pki.rootCA.certificate.isCA)
        #expect(pki.intermediateCA.certificate.isCA)
        #expect(pki.clientCAB.certificate.isCA)
        #expect(!pki.server.certificate.isCA)
        #expect(!pki.selfSigned.certificate.isCA)
    }

    @Test func validityDates() {
        #expect(pki.expired.certificate.notBefore == Date(timeIntervalSince1970: 1_577_836_800))  // 2020-01-01T00:00:00Z
        #expect(pki.expired.certificate.notAfter == Date(timeIntervalSince1970: 1_609_459_200))  // 2021-01-01T00:00:00Z
        #expect(pki.notYetValid.certificate.notBefore == Date(timeIntervalSince1970: 4_070_908_800))  // 2099-01-01T00:00:00Z
        let server = pki.server.certificate
        #expect(server.notBefore <= Date())
        #expect(abs(server.notAfter.timeIntervalSince(server.notBefore) - 825 * 86_400) < 1)
    }

    @Test func pemRoundTrip() throws {
        let certificate = pki.server.certificate
        #expect(certificate.pemString == pki.server.certificatePEM)
        #expect(try Certificate(pem: certificate.pemString) == certificate)
        #expect(try Certificate(derBytes: certificate.derBytes) == certificate)
        #expect(Set([certificate, try Certificate(derBytes: certificate.derBytes)]).count == 1)
    }

    @Test func parseChainKeepsOrderAndSkipsOtherBlocks() throws {
        let text =
            "subject=whatever\n" + pki.server.keyPEM + pki.server.certificatePEM + "\nnoise\n" + pki.intermediateCA.certificatePEM
            + pki.rootCA.certificatePEM
        let chain = try Certificate.parseChain(pem: text)
        #expect(chain == [pki.server.certificate, pki.intermediateCA.certificate, pki.rootCA.certificate])
        #expect(try Certificate.parseChain(derBytes: chain.map(\.derBytes)) == chain)
        #expect(try Certificate.parseChain(pem: pki.server.chainPEM.replacingOccurrences(of: "\n", with: "\r\n")).count == 2)
    }

    @Test func onePEMCertificateMeansOne() {
        #expect(throws: CryptoError(.malformedCertificate, "")) { try Certificate(pem: pki.server.chainPEM) }
        #expect(throws: CryptoError(.malformedCertificate, "")) { try Certificate(pem: pki.server.keyPEM) }
    }

    @Test(arguments: [
        ("empty", [UInt8]()),
        ("garbage", Array("definitely not a certificate".utf8)),
        ("zeros", [UInt8](repeating: 0, count: 100)),
        ("sequence header only", [0x30, 0x82, 0x01, 0x00]),
    ])
    func malformedDER(name: String, bytes: [UInt8]) {
        #expect(throws: CryptoError(.malformedCertificate, "")) { try Certificate(derBytes: bytes) }
    }

    @Test func truncatedAndExtendedDER() {
        let der = pki.server.certificateDER
        for length in [1, 10, der.count / 2, der.count - 1] {
            #expect(throws: CryptoError(.malformedCertificate, "")) { try Certificate(derBytes: Array(der.prefix(length))) }
        }
        #expect(throws: CryptoError(.malformedCertificate, "")) { try Certificate(derBytes: der + [0]) }
        var corrupted = der
        corrupted[corrupted.count / 3] ^= 0xff
        // A flipped byte either breaks the structure or changes the content; it never yields the same certificate.
        #expect((try? Certificate(derBytes: corrupted)) != pki.server.certificate)
    }

    @Test func malformedPEM() {
        let pem = pki.server.certificatePEM
        let lines = pem.split(separator: "\n")
        let truncated = lines.dropLast(2).joined(separator: "\n") + "\n"
        let badBase64 = pem.replacingOccurrences(of: lines[2], with: String(repeating: "!", count: lines[2].count))
        for text in ["", "hello", truncated, badBase64, "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"] {
            #expect(throws: CryptoError(.malformedCertificate, "")) { try Certificate.parseChain(pem: text) }
        }
        // A damaged second certificate fails the whole chain rather than shortening it.
        #expect(throws: CryptoError(.malformedCertificate, "")) { try Certificate.parseChain(pem: pem + truncated) }
    }

    @Test func limits() throws {
        let eleven = Array(repeating: pki.server.certificatePEM, count: 11).joined()
        #expect(throws: CryptoError(.chainTooLong, "")) { try Certificate.parseChain(pem: eleven) }
        #expect(throws: CryptoError(.chainTooLong, "")) {
            try Certificate.parseChain(derBytes: Array(repeating: pki.server.certificateDER, count: 11))
        }
        #expect(try Certificate.parseChain(pem: Array(repeating: pki.server.certificatePEM, count: 10).joined()).count == 10)
        #expect(throws: CryptoError(.certificateTooLarge, "")) {
            try Certificate(derBytes: [UInt8](repeating: 0x30, count: Certificate.maximumByteCount + 1))
        }
        let huge = String(repeating: "x", count: Certificate.maximumPEMByteCount + 1)
        #expect(throws: CryptoError(.certificateTooLarge, "")) { try Certificate.parseChain(pem: huge) }
    }

    @Test func errorsCarryOpenSSLDetailOnlyInDebugDescription() {
        do {
            _ = try Certificate(derBytes: [0x30, 0x03, 0x02, 0x01, 0x01])
            Issue.record("parsed garbage")
        } catch {
            #expect(error.code == .malformedCertificate)
            #expect(error.detail != nil)
            #expect(!String(describing: error).contains(error.detail ?? "-"))
            #expect(String(reflecting: error).contains(error.detail ?? "-"))
        }
    }
}
