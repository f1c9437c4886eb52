import CountersignCrypto
import CountersignTestSupport
import Foundation
import Testing

@Suite("TrustEvaluator")
struct TrustEvaluatorTests {
    let pki: TestPKI

    init() async throws {
        pki = try await TestPKI.shared()
    }

    /// The server chain as presented (leaf + intermediate), anchored at the test root only.
    private func evaluate(
        _ leaf: TestPKI.Leaf,
        host: String = "localhost",
        anchors: [TestPKI.Authority]? = nil,
        useSystemAnchors: Bool = false,
        pins: [String] = [],
        allowExpired: Bool = false,
        at time: Date = Date()
    ) -> TrustEvaluation {
        TrustEvaluator.evaluate(
            TrustEvaluationRequest(
                chain: leaf.chain,
                host: host,
                extraAnchors: (anchors ?? [pki.rootCA]).map(\.certificate),
                useSystemAnchors: useSystemAnchors,
                pins: pins,
                allowExpired: allowExpired,
                at: time
            )
        )
    }

    // MARK: Paths and anchors

    @Test func trustedChainWithExtraAnchor() {
        let result = evaluate(pki.server)
        #expect(result.trusted)
        #expect(result.failure == nil)
        #expect(
            result.verifiedChainSubjects == [
                "CN=localhost,O=Countersign Tests",
                "CN=Countersign Test Intermediate CA,O=Countersign Tests",
                "CN=Countersign Test Root CA,O=Countersign Tests",
            ]
        )
        #expect(result.verifiedChain.last == pki.rootCA.certificate)
        #expect(result.leafSubject == "CN=localhost,O=Countersign Tests")
        #expect(result.matchedPin == nil)
    }

    @Test func trustedFromDERAsReceived() {
        let result = TrustEvaluator.evaluate(
            TrustEvaluationRequest(chainDER: pki.server.chainDER, host: "localhost", extraAnchors: [pki.rootCA.certificate], useSystemAnchors: false)
        )
        #expect(result.trusted)
        #expect(result.verifiedChain.count == 3)
    }

    @Test func systemAnchorsDoNotIncludeTheTestRootButAddToExtraAnchors() {
        #expect(evaluate(pki.server, anchors: [], useSystemAnchors: true).failure?.code == .untrustedRoot)
        #expect(evaluate(pki.server, useSystemAnchors: true).trusted)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/etc/ssl/certs/ca-certificates.crt")))
    func systemAnchorsAreUsed() throws {
        // A root of the system bundle, presented as if it were a server's only certificate:
        // it is found among the anchors (then refused for its key usage, being a CA).
        let bundle = try String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8)
        let end = try #require(bundle.range(of: "-----END CERTIFICATE-----"))
        let root = try Certificate(pem: String(bundle[..<end.upperBound]))
        let withSystem = TrustEvaluator.evaluate(TrustEvaluationRequest(chain: [root], host: "example.invalid", useSystemAnchors: true))
        #expect(withSystem.verifiedChain == [root])
        #expect(withSystem.failure?.code != .untrustedRoot)
        let withoutSystem = TrustEvaluator.evaluate(TrustEvaluationRequest(chain: [root], host: "example.invalid", useSystemAnchors: false))
        #expect(withoutSystem.failure?.code == .untrustedRoot)
    }

    @Test func withoutAnchorIsUntrustedRoot() {
        let result = evaluate(pki.server, anchors: [])
        #expect(!result.trusted)
        #expect(result.failure?.code == .untrustedRoot)
        #expect(result.verifiedChain.isEmpty)
        #expect(result.leafSubject == "CN=localhost,O=Countersign Tests")
    }

    /// A CA certificate is no server's, as browsers and the CA/Browser Forum see it, though
    /// OpenSSL's server purpose takes it.
    @Test func aCALeafIsRefused() {
        let result = evaluate(pki.caLeaf)
        #expect(result.failure?.code == .badKeyUsage, "\(String(describing: result.failure))")
        #expect(result.failure?.depth == 0)
        #expect(evaluate(pki.server).failure == nil)
    }

    @Test func selfSignedLeafIsUntrustedRoot() {
        let result = evaluate(pki.selfSigned)
        #expect(result.failure?.code == .untrustedRoot)
        #expect(result.failure?.depth == 0)
        #expect(evaluate(pki.selfSigned, anchors: [], useSystemAnchors: true).failure?.code == .untrustedRoot)
    }

    @Test func selfSignedLeafGivenAsAnchorIsTrusted() {
        let result = TrustEvaluator.evaluate(
            TrustEvaluationRequest(
                chain: pki.selfSigned.chain,
                host: "localhost",
                extraAnchors: [pki.selfSigned.certificate],
                useSystemAnchors: false
            )
        )
        #expect(result.trusted)
        #expect(result.verifiedChain == [pki.selfSigned.certificate])
    }

    @Test func intermediateAsAnchorEndsThePath() {
        let result = TrustEvaluator.evaluate(
            TrustEvaluationRequest(
                chain: [pki.server.certificate],
                host: "localhost",
                extraAnchors: [pki.intermediateCA.certificate],
                useSystemAnchors: false
            )
        )
        #expect(result.trusted)
        #expect(result.verifiedChain == [pki.server.certificate, pki.intermediateCA.certificate])
    }

    @Test func missingIntermediateIsUntrustedRoot() {
        // No AIA fetching: an intermediate the server did not send is not found.
        let result = TrustEvaluator.evaluate(
            TrustEvaluationRequest(
                chain: [pki.server.certificate],
                host: "localhost",
                extraAnchors: [pki.rootCA.certificate],
                useSystemAnchors: false
            )
        )
        #expect(result.failure?.code == .untrustedRoot)
    }

    @Test func presentedRootAndOrderDoNotMatter() {
        let chain = [pki.server.certificate, pki.rootCA.certificate, pki.intermediateCA.certificate]
        let result = TrustEvaluator.evaluate(
            TrustEvaluationRequest(chain: chain, host: "localhost", extraAnchors: [pki.rootCA.certificate], useSystemAnchors: false)
        )
        #expect(result.trusted)
        #expect(result.verifiedChain.count == 3)
    }

    @Test func presentingTheRootDoesNotMakeItAnAnchor() {
        let chain = [pki.server.certificate, pki.intermediateCA.certificate, pki.rootCA.certificate]
        let result = TrustEvaluator.evaluate(TrustEvaluationRequest(chain: chain, host: "localhost", useSystemAnchors: false))
        #expect(result.failure?.code == .untrustedRoot)
    }

    @Test func unrelatedAnchorIsUntrustedRoot() {
        #expect(evaluate(pki.server, anchors: [pki.otherRootCA]).failure?.code == .untrustedRoot)
        #expect(evaluate(pki.otherRootServer, anchors: [pki.rootCA]).failure?.code == .untrustedRoot)
        #expect(evaluate(pki.otherRootServer, anchors: [pki.otherRootCA]).trusted)
        #expect(evaluate(pki.server, anchors: [pki.otherRootCA, pki.rootCA]).trusted)
    }

    // MARK: Validity

    @Test func expiredLeaf() {
        let result = evaluate(pki.expired)
        #expect(result.failure?.code == .expired)
        #expect(result.failure?.depth == 0)
        #expect(result.verifiedChain.count == 3)
    }

    @Test func expiredLeafIsTrustedWhenExpiryIsAllowed() {
        let result = evaluate(pki.expired, allowExpired: true)
        #expect(result.trusted)
        #expect(result.verifiedChain.first == pki.expired.certificate)
        #expect(evaluate(pki.notYetValid, allowExpired: true).trusted)
        #expect(evaluate(pki.server, allowExpired: true, at: Date(timeIntervalSinceNow: 200 * 365 * 86_400)).trusted)
    }

    @Test func allowingExpiryExcusesNothingElse() {
        #expect(evaluate(pki.expired, host: "other.example.com", allowExpired: true).failure?.code == .hostnameMismatch)
        #expect(evaluate(pki.expired, anchors: [], allowExpired: true).failure?.code == .untrustedRoot)
        #expect(evaluate(pki.clientAuthOnly, allowExpired: true).failure?.code == .badKeyUsage)
        #expect(evaluate(pki.expired, pins: [pki.otherRootCA.certificate.spkiSHA256Base64], allowExpired: true).failure?.code == .pinMismatch)
    }

    @Test func notYetValidLeaf() {
        #expect(evaluate(pki.notYetValid).failure?.code == .notYetValid)
    }

    @Test func evaluationTimeIsHonoured() {
        #expect(evaluate(pki.server, at: Date(timeIntervalSinceNow: 50 * 365 * 86_400)).failure?.code == .expired)
        #expect(evaluate(pki.server, at: Date(timeIntervalSince1970: 946_684_800)).failure?.code == .notYetValid)
        // Inside the expired leaf's validity, but before the intermediate existed.
        #expect(evaluate(pki.expired, at: Date(timeIntervalSince1970: 1_590_000_000)).failure?.code == .notYetValid)
    }

    @Test func extremeEvaluationTimesDoNotTrap() {
        #expect(evaluate(pki.server, at: .distantFuture).failure?.code == .expired)
        #expect(evaluate(pki.server, at: .distantPast).failure?.code == .notYetValid)
        #expect(evaluate(pki.server, at: Date(timeIntervalSince1970: .infinity)).failure?.code == .expired)
    }

    // MARK: Host names

    @Test(arguments: ["localhost", "LOCALHOST", "localhost.", "127.0.0.1", "::1", "[::1]", "0:0:0:0:0:0:0:1"])
    func hostsTheServerLeafMatches(host: String) {
        let result = evaluate(pki.server, host: host)
        #expect(result.trusted, "\(host): \(String(describing: result.failure))")
    }

    @Test(arguments: [
        "other.example.com", "127.0.0.2", "::2", "localhost.localdomain", "local", "127.0.0.1.", "", "[localhost]", "127.1", "127.000.000.001",
        "fe80::1%eth0", "local host",
    ])
    func hostsTheServerLeafDoesNotMatch(host: String) {
        #expect(evaluate(pki.server, host: host).failure?.code == .hostnameMismatch)
    }

    @Test func otherNameLeaf() {
        let result = evaluate(pki.otherName, host: "localhost")
        #expect(result.failure?.code == .hostnameMismatch)
        #expect(result.verifiedChain.count == 3)
        #expect(evaluate(pki.otherName, host: "other.example.com").trusted)
    }

    @Test func ipLiteralMatchesOnlyIPAddressSANs() {
        // other-root-server has IP 127.0.0.1 but not ::1.
        #expect(evaluate(pki.otherRootServer, host: "127.0.0.1", anchors: [pki.otherRootCA]).trusted)
        #expect(evaluate(pki.otherRootServer, host: "::1", anchors: [pki.otherRootCA]).failure?.code == .hostnameMismatch)
        // The wildcard leaf has no IP SAN at all.
        #expect(evaluate(pki.wildcard, host: "127.0.0.1").failure?.code == .hostnameMismatch)
    }

    @Test(arguments: [
        ("a.example.com", true),
        ("A.Example.COM", true),
        ("other.example.com", true),
        ("a.b.example.com", false),
        ("example.com", false),
        (".example.com", false),
        ("a.example.org", false),
        ("aexample.com", false),
    ])
    func wildcardCoversExactlyOneLeftmostLabel(host: String, trusted: Bool) {
        let result = evaluate(pki.wildcard, host: host)
        #expect(result.trusted == trusted)
        if !trusted { #expect(result.failure?.code == .hostnameMismatch) }
    }

    @Test func partialLabelWildcardsAndCommonNamesAreNotUsed() throws {
        let directory = try makeTemporaryDirectory()
        // SAN `f*.example.com`: a partial-label wildcard, refused by X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS.
        let partial = try issueLeaf(in: directory, name: "partial", commonName: "foo.example.com", san: "DNS:f*.example.com")
        #expect(evaluate(chain: [partial], host: "foo.example.com").failure?.code == .hostnameMismatch)
        // No SAN, CN=localhost: the common name is never a host name here, as in browsers.
        let commonNameOnly = try issueLeaf(in: directory, name: "cn-only", commonName: "localhost", san: nil)
        #expect(evaluate(chain: [commonNameOnly], host: "localhost").failure?.code == .hostnameMismatch)
        // Control: the same issuance with a proper SAN is trusted.
        let proper = try issueLeaf(in: directory, name: "proper", commonName: "x", san: "DNS:foo.example.com")
        #expect(evaluate(chain: [proper], host: "foo.example.com").trusted)
    }

    @Test func weakSignatureAndNonCAIssuerAreInvalidChains() throws {
        let directory = try makeTemporaryDirectory()
        // Security level 2: a SHA-1 signature is refused, even from a trusted issuer.
        let sha1 = try issueLeaf(in: directory, name: "sha1", commonName: "localhost", san: "DNS:localhost", digest: "sha1")
        let weak = evaluate(chain: [sha1], host: "localhost")
        #expect(weak.failure?.code == .invalidChain)
        #expect(weak.failure?.detail.contains("too weak") == true)

        // A leaf (CA:FALSE) that signs another certificate is no issuer.
        let forged = try issueLeaf(
            in: directory,
            name: "forged",
            commonName: "localhost",
            san: "DNS:localhost",
            issuer: (pki.server.certificatePath, pki.server.keyPath)
        )
        let result = TrustEvaluator.evaluate(
            TrustEvaluationRequest(
                chain: [forged] + pki.server.chain,
                host: "localhost",
                extraAnchors: [pki.rootCA.certificate],
                useSystemAnchors: false
            )
        )
        #expect(result.failure?.code == .invalidChain)
        #expect(result.failure?.detail.contains("invalid CA certificate") == true)
    }

    // MARK: Pins

    @Test func pinOnLeafOrIntermediateOrRoot() {
        for (certificate, name) in [
            (pki.server.certificate, "leaf"), (pki.intermediateCA.certificate, "intermediate"), (pki.rootCA.certificate, "root"),
        ] {
            let pin = certificate.spkiSHA256Base64
            let result = evaluate(pki.server, pins: ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", pin])
            #expect(result.trusted, "pin on \(name)")
            #expect(result.matchedPin == pin)
        }
    }

    @Test func pinInBase64URLWithoutPaddingMatches() {
        let pin = pki.server.certificate.spkiSHA256Base64
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(evaluate(pki.server, pins: [pin]).trusted)
    }

    @Test func wrongPinWithValidChainIsPinMismatch() throws {
        let random = Data(try SecureRandom.bytes(32)).base64EncodedString()
        let result = evaluate(pki.server, pins: [random, pki.otherRootCA.certificate.spkiSHA256Base64, "not a pin"])
        #expect(!result.trusted)
        #expect(result.failure?.code == .pinMismatch)
        #expect(result.verifiedChain.count == 3)
    }

    @Test func pinDoesNotRescueAnUntrustedChain() {
        let result = evaluate(pki.server, anchors: [], pins: [pki.server.certificate.spkiSHA256Base64])
        #expect(result.failure?.code == .untrustedRoot)
        // The anchor's pin is checked against the verified chain only, never a presented extra.
        let unrelated = TrustEvaluator.evaluate(
            TrustEvaluationRequest(
                chain: [pki.server.certificate, pki.intermediateCA.certificate, pki.otherRootCA.certificate],
                host: "localhost",
                extraAnchors: [pki.rootCA.certificate],
                useSystemAnchors: false,
                pins: [pki.otherRootCA.certificate.spkiSHA256Base64]
            )
        )
        #expect(unrelated.failure?.code == .pinMismatch)
    }

    @Test func pinValidation() throws {
        #expect(TrustEvaluator.isValidPin(pki.server.certificate.spkiSHA256Base64))
        #expect(!TrustEvaluator.isValidPin("abc"))
        #expect(!TrustEvaluator.isValidPin(Data(try SecureRandom.bytes(20)).base64EncodedString()))
    }

    // MARK: Usage and malformed input

    @Test func clientAuthOnlyLeafIsBadKeyUsage() {
        let result = evaluate(pki.clientAuthOnly)
        #expect(result.failure?.code == .badKeyUsage)
        #expect(result.failure?.depth == 0)
        // A real client certificate, checked as if a server presented it.
        #expect(evaluate(pki.clientA.leaf, host: "localhost", anchors: [pki.clientCAA]).failure?.code == .badKeyUsage)
    }

    @Test func garbageDERIsMalformed() {
        let result = TrustEvaluator.evaluate(
            TrustEvaluationRequest(
                chainDER: [Array("garbage".utf8)],
                host: "localhost",
                extraAnchors: [pki.rootCA.certificate],
                useSystemAnchors: false
            )
        )
        #expect(result.failure?.code == .malformedCertificate)
        #expect(result.leafSubject == nil)
        let badIntermediate = TrustEvaluator.evaluate(
            TrustEvaluationRequest(
                chainDER: [pki.server.certificateDER, [0x30, 0x00]],
                host: "localhost",
                extraAnchors: [pki.rootCA.certificate],
                useSystemAnchors: false
            )
        )
        #expect(badIntermediate.failure?.code == .malformedCertificate)
        #expect(badIntermediate.failure?.depth == 1)
    }

    @Test func emptyAndOverlongChains() {
        #expect(TrustEvaluator.evaluate(TrustEvaluationRequest(chainDER: [], host: "localhost")).failure?.code == .malformedCertificate)
        let long = [pki.server.certificateDER] + Array(repeating: pki.intermediateCA.certificateDER, count: 10)
        #expect(TrustEvaluator.evaluate(TrustEvaluationRequest(chainDER: long, host: "localhost")).failure?.code == .invalidChain)
    }

    @Test func failureDetailNamesTheOpenSSLReasonAndCertificate() {
        let failure = evaluate(pki.expired).failure
        #expect(failure?.detail.contains("certificate has expired") == true)
        #expect(failure?.detail.contains("CN=localhost") == true)
        #expect(failure == TrustFailure(.expired, detail: "anything"))
    }

    @Test func concurrentEvaluationsAgree() async {
        let pki = self.pki
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let leaf = index % 2 == 0 ? pki.server : pki.expired
                    let result = TrustEvaluator.evaluate(
                        TrustEvaluationRequest(
                            chain: leaf.chain,
                            host: "localhost",
                            extraAnchors: [pki.rootCA.certificate],
                            useSystemAnchors: false
                        )
                    )
                    return result.trusted == (index % 2 == 0)
                }
            }
            for await agreed in group { #expect(agreed) }
        }
    }

    // MARK: Helpers

    private func evaluate(chain: [Certificate], host: String) -> TrustEvaluation {
        TrustEvaluator.evaluate(
            TrustEvaluationRequest(
                chain: chain + [pki.intermediateCA.certificate],
                host: host,
                extraAnchors: [pki.rootCA.certificate],
                useSystemAnchors: false
            )
        )
    }

    /// A serverAuth leaf with the given SAN (or none), from the test intermediate unless
    /// another issuer's certificate and key files are given.
    private func issueLeaf(
        in directory: String,
        name: String,
        commonName: String,
        san: String?,
        digest: String = "sha256",
        issuer: (certificatePath: String, keyPath: String)? = nil
    ) throws -> Certificate {
        let issuer = issuer ?? (pki.intermediateCA.certificatePath, pki.intermediateCA.keyPath)
        let base = "\(directory)/\(name)"
        var extensions = "[ext]\nbasicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature\nextendedKeyUsage = serverAuth\n"
        if let san { extensions += "subjectAltName = \(san)\n" }
        try extensions.write(toFile: "\(base).ext", atomically: true, encoding: .utf8)
        try "[req]\ndistinguished_name = dn\n[dn]\n".write(toFile: "\(base).cnf", atomically: true, encoding: .utf8)
        try TestPKI.runOpenSSL([
            "req", "-new", "-config", "\(base).cnf", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-noenc",
            "-keyout", "\(base).key", "-out", "\(base).csr", "-subj", "/CN=\(commonName)",
        ])
        try TestPKI.runOpenSSL([
            "x509", "-req", "-in", "\(base).csr", "-CA", issuer.certificatePath, "-CAkey", issuer.keyPath, "-\(digest)",
            "-set_serial", "0x\(try SecureRandom.bytes(8).hexString)", "-days", "30", "-extfile", "\(base).ext", "-extensions", "ext", "-out",
            "\(base).pem",
        ])
        return try Certificate(pem: String(contentsOfFile: "\(base).pem", encoding: .utf8))
    }
}
