import CountersignCore
import Testing

@Suite("Digest challenge")
struct DigestChallengeTests {
    let parser = AuthenticationChallengeParser()

    func build(_ field: String) throws -> DigestChallenge {
        try DigestChallenge(try #require(try parser.parse(field).first))
    }

    @Test func readsEveryParameter() throws {
        let challenge = try build(
            #"Digest realm="api@example.org", domain="/a  http://b.example/c", nonce="n", opaque="o", stale=TRUE, algorithm=SHA-512-256-sess, qop="auth-int, auth", charset=utf-8, userhash=true, future=ignored"#
        )
        #expect(challenge.realm == "api@example.org")
        #expect(challenge.domain == ["/a", "http://b.example/c"])
        #expect(challenge.nonce == "n")
        #expect(challenge.opaque == "o")
        #expect(challenge.isStale)
        #expect(challenge.algorithm == .sha512_256Session)
        #expect(challenge.algorithmName == "SHA-512-256-sess")
        #expect(challenge.qopOptions == [.authInt, .auth])
        #expect(challenge.isCharsetUTF8)
        #expect(challenge.userhash)
    }

    @Test func defaultsWhenParametersAreAbsent() throws {
        let challenge = try build(#"Digest realm="", nonce="""#)
        #expect(challenge.realm == "")
        #expect(challenge.nonce == "")
        #expect(challenge.domain == [])
        #expect(challenge.opaque == nil)
        #expect(!challenge.isStale)
        #expect(challenge.algorithm == .md5)
        #expect(challenge.algorithmName == nil)
        #expect(challenge.qopOptions == [])
        #expect(!challenge.isCharsetUTF8)
        #expect(!challenge.userhash)
    }

    @Test("stale and userhash are true only for a case-insensitive 'true'", arguments: ["false", "yes", "1", "", "truely"])
    func flagsAreStrict(value: String) throws {
        let challenge = try build(#"Digest realm="r", nonce="n", stale="\#(value)", userhash="\#(value)""#)
        #expect(!challenge.isStale)
        #expect(!challenge.userhash)
    }

    @Test(
        "algorithm names fold case",
        arguments: zip(
            ["md5", "MD5-SESS", "sha-256", "Sha-256-Sess", "sha-512-256", "SHA-512-256-SESS"],
            DigestAlgorithm.allCases
        ))
    func algorithmNames(name: String, algorithm: DigestAlgorithm) throws {
        #expect(try build(#"Digest realm="r", nonce="n", qop=auth, algorithm=\#(name)"#).algorithm == algorithm)
        #expect(DigestAlgorithm(name: algorithm.name) == algorithm)
    }

    @Test(
        "refusals carry a stable code",
        arguments: [
            (#"Digest nonce="n""#, CountersignError.Code.missingChallengeParameter),
            (#"Digest realm="r""#, .missingChallengeParameter),
            ("Digest", .missingChallengeParameter),
            (#"Digest realm="r", nonce="n", algorithm=SHA-1"#, .unsupportedDigestAlgorithm),
            (#"Digest realm="r", nonce="n", algorithm=SHA-512"#, .unsupportedDigestAlgorithm),
            (#"Digest realm="r", nonce="n", algorithm=SHA-256-sess-x"#, .unsupportedDigestAlgorithm),
            (#"Digest realm="r", nonce="n", qop="auth-conf""#, .unsupportedDigestQop),
            (#"Digest realm="r", nonce="n", qop="""#, .unsupportedDigestQop),
            (#"Digest realm="r", nonce="n", charset=ISO-8859-1"#, .invalidChallengeParameter),
            (#"Digest realm="r", nonce="n", algorithm=MD5-sess"#, .invalidChallengeParameter),
            (#"Digest realm="r", nonce="n", nonce="m""#, .duplicateParameter),
            (#"Digest realm="r", REALM="r", nonce="n""#, .duplicateParameter),
            ("Digest abc==", .invalidChallengeParameter),
            (#"Basic realm="r", nonce="n""#, .invalidChallengeParameter),
        ])
    func refusals(field: String, code: CountersignError.Code) throws {
        let parsed = try #require(try parser.parse(field).first)
        let error = #expect(throws: CountersignError.self) { try DigestChallenge(parsed) }
        #expect(error?.code == code)
        #expect(error?.message.isEmpty == false)
    }

    @Test func unknownQopValuesAreDroppedWhenAKnownOneRemains() throws {
        #expect(try build(#"Digest realm="r", nonce="n", qop="auth-conf, auth, auth""#).qopOptions == [.auth])
    }

    @Test func errorMessagesDoNotEchoControlCharactersOrLongValues() throws {
        let parsed = try #require(
            try parser.parse(#"Digest realm="r", nonce="n", algorithm="\#(String(repeating: "x", count: 100))\#t""#).first)
        let error = #expect(throws: CountersignError.self) { try DigestChallenge(parsed) }
        #expect(error?.message.contains(String(repeating: "x", count: 33)) == false)
        #expect(error?.message.contains("\t") == false)
    }
}
