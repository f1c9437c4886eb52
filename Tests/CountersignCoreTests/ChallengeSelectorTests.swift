import CountersignCore
import Testing

@Suite("Challenge selection")
struct ChallengeSelectorTests {
    let parser = AuthenticationChallengeParser()
    let selector = AuthenticationChallengeSelector()

    func statuses(_ selection: AuthenticationChallengeSelection) -> [AuthenticationChallengeAssessment.Status] {
        selection.assessments.map(\.status)
    }

    @Test func rfc7616PrefersSHA256OverMD5() throws {
        let challenges = try parser.parse([
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf", opaque="FQhe""#,
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf", opaque="FQhe""#,
        ])
        let selection = selector.select(from: challenges) { _, _ in true }
        #expect(statuses(selection) == [.chosen, .lowerPreference])
        #expect(selection.chosen?.index == 0)
        #expect(selection.chosen?.mechanism == .digest(.sha256))
        #expect(selection.chosen?.digest?.algorithm == .sha256)
        #expect(selection.assessments[1].reason == "Digest MD5 ranks below the chosen Digest SHA-256")
    }

    /// A challenge offering only auth-int, for a request whose body did not come (or came hashed
    /// under another algorithm), gives way to one that can be answered; alone, it is still chosen
    /// (its answer then says that the body is needed).
    @Test func anAuthIntOnlyChallengeWithoutTheBodyGivesWay() throws {
        let challenges = try parser.parse([
            #"Digest realm="r", nonce="a", algorithm=SHA-256, qop="auth-int""#,
            #"Digest realm="r", nonce="b", algorithm=MD5, qop="auth""#,
        ])
        let withoutBody = selector.select(from: challenges, canHashEntityBody: { _ in false }) { _, _ in true }
        #expect(statuses(withoutBody) == [.lowerPreference, .chosen])
        #expect(withoutBody.assessments[0].reason.contains("needs the request's body"))
        let hashedUnderSHA256 = DigestEntityBody.hash(.sha256, hex: String(repeating: "0", count: 64))
        let withBody = selector.select(from: challenges, canHashEntityBody: hashedUnderSHA256.hashes(under:)) { _, _ in true }
        #expect(statuses(withBody) == [.chosen, .lowerPreference])
        let alone = selector.select(from: Array(challenges.prefix(1)), canHashEntityBody: { _ in false }) { _, _ in true }
        #expect(statuses(alone) == [.chosen])
    }

    @Test func defaultOrderAcrossSchemes() throws {
        let challenges = try parser.parse([
            #"Basic realm="r""#, "Negotiate", "NTLM", #"Digest realm="r", nonce="n", qop=auth"#,
            #"Bearer realm="r""#, #"Newauth realm="r""#, #"Digest realm="r", nonce="n", algorithm=SHA-512-256, qop=auth"#,
        ])
        let selection = selector.select(from: challenges) { _, _ in true }
        #expect(
            statuses(selection) == [
                .lowerPreference, .unsupportedScheme, .lowerPreference, .lowerPreference, .unsupportedScheme, .unsupportedScheme, .chosen,
            ]
        )
        #expect(selection.assessments[1].reason == "Negotiate is reported but not answered")
        #expect(selection.assessments[5].reason == "scheme 'Newauth' is not supported")
        #expect(selection.assessments.map(\.index) == Array(0..<7))
    }

    @Test func fallsBackWhenNoCredentialIsHeld() throws {
        let challenges = try parser.parse([#"Digest realm="digest-realm", nonce="n", qop=auth"#, #"Basic realm="basic-realm""#])
        var asked: [String] = []
        let selection = selector.select(from: challenges) { scheme, realm in
            asked.append("\(scheme.name) \(realm ?? "-")")
            return scheme == .basic
        }
        #expect(statuses(selection) == [.noCredential, .chosen])
        #expect(asked == ["Digest digest-realm", "Basic basic-realm"])
    }

    @Test func sessionVariantsRankWithTheirBaseAndTiesKeepServerOrder() throws {
        let challenges = try parser.parse(
            #"Digest realm="r", nonce="n", qop=auth, algorithm=MD5-sess, Digest realm="r", nonce="n", qop=auth, algorithm=SHA-256-sess, Digest realm="r", nonce="n", qop=auth, algorithm=SHA-256"#
        )
        let selection = selector.select(from: challenges) { _, _ in true }
        #expect(statuses(selection) == [.lowerPreference, .chosen, .lowerPreference])
        #expect(selection.assessments.map(\.mechanism) == [.digest(.md5), .digest(.sha256), .digest(.sha256)])
    }

    @Test func reportsUnsupportedAndMalformedChallenges() throws {
        let challenges = try parser.parse([
            #"Digest realm="r", nonce="n", algorithm=SHA-1"#,
            #"Digest realm="r", nonce="n", qop="auth-conf""#,
            #"Digest realm="r""#,
            #"Digest realm="r", nonce="a", nonce="b""#,
            #"Basic realm="a", realm="b""#,
            "Basic abc==",
            #"Basic realm="a", charset="ISO-8859-1""#,
            "NTLM TlRMTVNTUAACAAAA",
        ])
        var askedFor: [AuthenticationScheme] = []
        let selection = selector.select(from: challenges) { scheme, _ in
            askedFor.append(scheme)
            return true
        }
        #expect(
            statuses(selection) == [
                .unsupportedAlgorithm, .unsupportedAlgorithm, .malformed(.missingChallengeParameter),
                .malformed(.duplicateParameter), .malformed(.duplicateParameter), .malformed(.invalidChallengeParameter),
                .malformed(.invalidChallengeParameter), .chosen,
            ]
        )
        // Only challenges that pass every other check reach the credential lookup.
        #expect(askedFor == [.ntlm])
        #expect(!selection.isEveryChallengeMalformed)
    }

    @Test func nothingChosenWhenEverythingIsMalformed() throws {
        let challenges = try parser.parse([#"Digest realm="r""#, #"Basic realm="a", realm="b""#])
        let selection = selector.select(from: challenges) { _, _ in true }
        #expect(selection.chosen == nil)
        #expect(selection.isEveryChallengeMalformed)
        #expect(!selector.select(from: []) { _, _ in true }.isEveryChallengeMalformed)
    }

    @Test func customPreferenceOrdersAndExcludes() throws {
        let challenges = try parser.parse([
            #"Digest realm="r", nonce="n", qop=auth, algorithm=SHA-256"#, #"Digest realm="r", nonce="n", qop=auth"#, #"Basic realm="r""#,
            "NTLM",
        ])
        let selection = AuthenticationChallengeSelector(preference: [.basic, .digest(.md5)]).select(from: challenges) { _, _ in true }
        #expect(statuses(selection) == [.unsupportedAlgorithm, .lowerPreference, .chosen, .unsupportedScheme])
        #expect(selection.assessments[0].reason == "Digest SHA-256 is not in the preference list")
        #expect(selection.assessments[3].reason == "NTLM is not in the preference list")
    }

    @Test func negotiateCanBeChosenWhenPreferred() throws {
        let challenges = try parser.parse(["Negotiate", "NTLM"])
        let selection = AuthenticationChallengeSelector(preference: [.negotiate, .ntlm]).select(from: challenges) { _, realm in realm == nil
        }
        #expect(statuses(selection) == [.chosen, .lowerPreference])
    }

    struct LookupFailed: Error {}

    @Test func rethrowsTheCredentialLookupError() throws {
        let challenges = try parser.parse([#"Basic realm="r""#])
        #expect(throws: LookupFailed.self) {
            try selector.select(from: challenges) { _, _ throws(LookupFailed) in throw LookupFailed() }
        }
    }

    @Test func mechanismsDescribeThemselves() {
        #expect(
            AuthenticationMechanism.defaultPreference.map(\.description) == [
                "Digest SHA-512-256", "Digest SHA-256", "Digest MD5", "NTLM", "Basic",
            ])
    }
}
