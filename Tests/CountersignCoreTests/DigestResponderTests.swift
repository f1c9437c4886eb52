import CountersignCore
import CountersignCrypto
import Testing

@Suite("Digest responder")
struct DigestResponderTests {
    let parser = AuthenticationChallengeParser()
    let responder = DigestResponder(hash: openSSLDigestHash)

    func digestChallenge(_ field: String) throws -> DigestChallenge {
        try DigestChallenge(try #require(try parser.parse(field).first))
    }

    /// An independent, string-based reading of RFC 7616 §3.4 to check the responder against.
    func referenceResponse(
        _ algorithm: DigestAlgorithm, user: String, realm: String, password: String, method: String, uri: String,
        nonce: String, nc: String, cnonce: String, qop: String?, body: [UInt8] = []
    ) -> String {
        let hash: (HashAlgorithm) =
            switch algorithm.hashAlgorithm {
            case .md5: .md5
            case .sha256: .sha256
            case .sha512_256: .sha512_256
            }
        func h(_ text: String) -> String { Digest.hash(hash, text).hexString }
        var ha1 = h("\(user):\(realm):\(password)")
        if algorithm.isSession { ha1 = h("\(ha1):\(nonce):\(cnonce)") }
        let ha2 = qop == "auth-int" ? h("\(method):\(uri):\(Digest.hash(hash, body).hexString)") : h("\(method):\(uri)")
        guard let qop else { return h("\(ha1):\(nonce):\(ha2)") }
        return h("\(ha1):\(nonce):\(nc):\(cnonce):\(qop):\(ha2)")
    }

    // MARK: RFC 7616 §3.9.1

    static let rfc7616Nonce = "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v"
    static let rfc7616Opaque = "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
    static let rfc7616CNonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"

    @Test(
        "RFC 7616 §3.9.1 examples give the RFC's exact Authorization values",
        arguments: [
            (
                "SHA-256",
                #"Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
            ),
            (
                "MD5",
                #"Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, response="8ca523f5e9506fed4657c9700eebdbec", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
            ),
        ])
    func rfc7616Examples(algorithm: String, expected: String) throws {
        let challenge = try digestChallenge(
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=\#(algorithm), nonce="\#(Self.rfc7616Nonce)", opaque="\#(Self.rfc7616Opaque)""#
        )
        let answer = try responder.authorization(
            for: challenge, user: "Mufasa", password: "Circle of Life", method: "GET", requestURI: "/dir/index.html",
            cnonce: Self.rfc7616CNonce, nonceCount: 1
        )
        // The RFC prints the field folded over lines; joined with single spaces it is this exactly.
        #expect(answer.headerValue == expected)
        #expect(answer.qop == .auth)
        #expect(answer.nonceCount == 1)
        #expect(answer.algorithm.name == algorithm)
    }

    /// Until its nonce expires the answer is as good as the password for that request: neither
    /// the field value nor the response hash may show when it is printed or dumped.
    @Test func anAnswerIsRedactedWhenPrintedOrDumped() throws {
        let challenge = try digestChallenge(#"Digest realm="r", qop="auth", nonce="n""#)
        let answer = try responder.authorization(
            for: challenge, user: "Mufasa", password: "Circle of Life", method: "GET", requestURI: "/", cnonce: "c", nonceCount: 1
        )
        var dumped = ""
        dump(answer, to: &dumped)
        for text in [String(describing: answer), String(reflecting: answer), dumped] {
            #expect(!text.contains(answer.response) && !text.contains("Mufasa"), "\(text)")
        }
    }

    // MARK: RFC 7616 §3.9.2 and its erratum

    static func rfc7616UserhashChallenge(userhash: Bool = true) -> String {
        #"Digest realm="api@example.org", qop="auth", algorithm=SHA-512-256, nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", charset=UTF-8, userhash=\#(userhash)"#
    }

    /// RFC 7616 §3.9.2 prints username="488869477b..." and response="ae66e67d...", which no
    /// reading of the stated inputs reproduces (erratum 4897 reports the section). Computed
    /// independently (OpenSSL's `openssl dgst -sha512-256` over the UTF-8 bytes), the inputs the
    /// section states (user "Jäsøn Doe", password "Secret, or not?") give the values below, which
    /// other implementations test for as well. The section's printed values are checked to be absent.
    @Test func rfc7616UserhashExampleAsCorrected() throws {
        let challenge = try digestChallenge(Self.rfc7616UserhashChallenge())
        #expect(challenge.userhash)
        #expect(challenge.isCharsetUTF8)
        #expect(challenge.algorithm == .sha512_256)
        let answer = try responder.authorization(
            for: challenge, user: "Jäsøn Doe", password: "Secret, or not?", method: "GET", requestURI: "/doe.json",
            cnonce: "NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v", nonceCount: 1
        )
        #expect(
            answer.headerValue
                == #"Digest username="793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b", realm="api@example.org", uri="/doe.json", algorithm=SHA-512-256, nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", nc=00000001, cnonce="NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v", qop=auth, response="3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5", opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", userhash=true"#
        )
        #expect(!answer.headerValue.contains("488869477bf257147b804c45308cd62ac4e25eb717b12b298c79e62dcea254ec"))
        #expect(answer.response != "ae66e67d6b427bd3f120414a82e4acff38e8ecd9101d6c861229025f607a79dd")
        // The user-name hash is H(user ":" realm) under the challenge's hash.
        #expect(
            Digest.hash(.sha512_256, "Jäsøn Doe:api@example.org").hexString
                == "793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b")
    }

    /// The same section's alternative without userhash: `username*` in RFC 8187 notation, and the
    /// same response (A1 always uses the real user name).
    @Test func rfc7616ExtendedUsernameWithoutUserhash() throws {
        let challenge = try digestChallenge(Self.rfc7616UserhashChallenge(userhash: false))
        #expect(!challenge.userhash)
        let answer = try responder.authorization(
            for: challenge, user: "Jäsøn Doe", password: "Secret, or not?", method: "GET", requestURI: "/doe.json",
            cnonce: "NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v", nonceCount: 1
        )
        #expect(answer.headerValue.hasPrefix("Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, realm=\"api@example.org\""))
        #expect(answer.response == "3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5")
        #expect(!answer.headerValue.contains("userhash"))
    }

    // MARK: RFC 2617 and RFC 2069

    @Test func rfc2617Example() throws {
        let challenge = try digestChallenge(
            #"Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#
        )
        let answer = try responder.authorization(
            for: challenge, user: "Mufasa", password: "Circle Of Life", method: "GET", requestURI: "/dir/index.html",
            cnonce: "0a4f113b", nonceCount: 1
        )
        #expect(answer.response == "6629fae49393a05397450978507c4ef1")
        // No algorithm in the challenge, so none in the answer, as in the RFC's example.
        #expect(
            answer.headerValue
                == #"Digest username="Mufasa", realm="testrealm@host.com", uri="/dir/index.html", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", nc=00000001, cnonce="0a4f113b", qop=auth, response="6629fae49393a05397450978507c4ef1", opaque="5ccc069c403ebaf9f0171e9517f40e41""#
        )
    }

    /// RFC 2069 mode (no qop). RFC 2069's own example prints a response that does not follow from
    /// its inputs (a known erratum); the expected value was computed with `openssl dgst -md5`.
    @Test func rfc2069ModeWithoutQop() throws {
        let challenge = try digestChallenge(
            #"Digest realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#
        )
        #expect(challenge.qopOptions.isEmpty)
        let answer = try responder.authorization(
            for: challenge, user: "Mufasa", password: "CircleOfLife", method: "GET", requestURI: "/dir/index.html",
            cnonce: "ignored", nonceCount: 7
        )
        #expect(answer.response == "1949323746fe6a43ef61f9606e7febea")
        #expect(answer.qop == nil)
        #expect(answer.nonceCount == nil)
        #expect(
            answer.headerValue
                == #"Digest username="Mufasa", realm="testrealm@host.com", uri="/dir/index.html", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", response="1949323746fe6a43ef61f9606e7febea", opaque="5ccc069c403ebaf9f0171e9517f40e41""#
        )
    }

    // MARK: Every algorithm, both qops

    @Test("every algorithm and qop matches the reference computation", arguments: DigestAlgorithm.allCases, ["auth", "auth-int"])
    func everyAlgorithm(algorithm: DigestAlgorithm, qop: String) throws {
        let challenge = try digestChallenge(#"Digest realm="r@example.org", nonce="abc123", qop="\#(qop)", algorithm=\#(algorithm.name)"#)
        let body = Array(#"{"pin":"1234"}"#.utf8)
        let answer = try responder.authorization(
            for: challenge, user: "alice", password: "pa:ss", method: "POST", requestURI: "/api/v1?x=1",
            entityBody: .bytes(body), cnonce: "cn0nce", nonceCount: 0x2A
        )
        let expected = referenceResponse(
            algorithm, user: "alice", realm: "r@example.org", password: "pa:ss", method: "POST", uri: "/api/v1?x=1",
            nonce: "abc123", nc: "0000002a", cnonce: "cn0nce", qop: qop, body: body
        )
        #expect(answer.response == expected)
        #expect(answer.response.utf8.count == algorithm.hashAlgorithm.digestLength * 2)
        #expect(answer.headerValue.contains("nc=0000002a, cnonce=\"cn0nce\", qop=\(qop), response=\"\(expected)\""))
        #expect(answer.headerValue.contains("algorithm=\(algorithm.name),"))
    }

    @Test func authIntAcceptsAPrecomputedBodyHash() throws {
        let challenge = try digestChallenge(#"Digest realm="r", nonce="n", qop="auth-int", algorithm=SHA-256"#)
        let body = Array("hello".utf8)
        let fromBytes = try responder.authorization(
            for: challenge, user: "u", password: "p", method: "PUT", requestURI: "/x", entityBody: .bytes(body), cnonce: "c", nonceCount: 1
        )
        let fromHash = try responder.authorization(
            for: challenge, user: "u", password: "p", method: "PUT", requestURI: "/x",
            entityBody: .hash(.sha256, hex: Digest.hash(.sha256, body).hexString.uppercased()), cnonce: "c", nonceCount: 1
        )
        #expect(fromBytes.response == fromHash.response)
        #expect(fromBytes.qop == .authInt)
    }

    @Test func authIntRefusesAMissingOrMismatchedBody() throws {
        let challenge = try digestChallenge(#"Digest realm="r", nonce="n", qop="auth-int", algorithm=SHA-256"#)
        let bodies: [DigestEntityBody?] = [
            nil, .hash(.md5, hex: String(repeating: "0", count: 32)), .hash(.sha256, hex: "abc"),
            .hash(.sha256, hex: String(repeating: "g", count: 64)),
        ]
        for body in bodies {
            #expect(throws: CountersignError(.digestEntityBodyRequired, "")) {
                try responder.authorization(
                    for: challenge, user: "u", password: "p", method: "PUT", requestURI: "/x", entityBody: body, cnonce: "c", nonceCount: 1)
            }
        }
    }

    @Test(
        "qop: auth whenever offered, auth-int only when alone, none for RFC 2069",
        arguments: [
            (#"qop="auth-int, auth","#, DigestQop?.some(.auth)),
            (#"qop="auth,auth-int","#, .auth),
            (#"qop="auth-int","#, .authInt),
            (#"qop="auth-int, auth-conf","#, .authInt),
            ("", nil),
        ])
    func qopChoice(qop: String, expected: DigestQop?) throws {
        let challenge = try digestChallenge(#"Digest realm="r", \#(qop) nonce="n""#)
        let answer = try responder.authorization(
            for: challenge, user: "u", password: "p", method: "GET", requestURI: "/", entityBody: .bytes([]), cnonce: "c", nonceCount: 1
        )
        #expect(answer.qop == expected)
        #expect(answer.headerValue.contains("cnonce=") == (expected != nil))
    }

    // MARK: Encoding of the answer

    @Test func quotesAndEscapesEveryQuotedValue() throws {
        let challenge = try digestChallenge(#"Digest realm="a \"quoted\" \\ realm", nonce="n\"1", opaque="o\\p", qop=auth"#)
        let answer = try responder.authorization(
            for: challenge, user: #"do"e\x"#, password: "p", method: "GET", requestURI: "/q?\"x\"", cnonce: "c", nonceCount: 1
        )
        #expect(answer.headerValue.contains(#"username="do\"e\\x""#))
        #expect(answer.headerValue.contains(#"realm="a \"quoted\" \\ realm""#))
        #expect(answer.headerValue.contains(#"nonce="n\"1""#))
        #expect(answer.headerValue.contains(#"opaque="o\\p""#))
        #expect(answer.headerValue.contains(#"uri="/q?\"x\"""#))
        let echoed = try #require(try parser.parse(answer.headerValue).first)
        #expect(echoed.parameter("username") == #"do"e\x"#)
        #expect(echoed.parameter("realm") == #"a "quoted" \ realm"#)
        // The hash covers the unquoted values.
        #expect(
            answer.response
                == referenceResponse(
                    .md5, user: #"do"e\x"#, realm: #"a "quoted" \ realm"#, password: "p", method: "GET", uri: "/q?\"x\"",
                    nonce: "n\"1", nc: "00000001", cnonce: "c", qop: "auth"
                )
        )
    }

    @Test(
        "nc is exactly eight lowercase hex digits",
        arguments: [
            (UInt32(1), "00000001"), (0xABCDEF, "00abcdef"), (0x1000_0000, "10000000"), (UInt32.max, "ffffffff"),
        ])
    func nonceCountFormat(count: UInt32, expected: String) throws {
        let challenge = try digestChallenge(#"Digest realm="r", nonce="n", qop="auth""#)
        let answer = try responder.authorization(
            for: challenge, user: "u", password: "p", method: "GET", requestURI: "/", cnonce: "c", nonceCount: count)
        #expect(answer.headerValue.contains("nc=\(expected),"))
        #expect(answer.nonceCount == count)
    }

    @Test func echoesTheServersAlgorithmSpellingAndOmitsAbsentOpaque() throws {
        let challenge = try digestChallenge(#"Digest realm="r", nonce="n", qop="auth", algorithm="sha-256-SESS""#)
        #expect(challenge.algorithm == .sha256Session)
        let answer = try responder.authorization(
            for: challenge, user: "u", password: "p", method: "GET", requestURI: "/", cnonce: "c", nonceCount: 1)
        #expect(answer.headerValue.contains("algorithm=sha-256-SESS,"))
        #expect(!answer.headerValue.contains("opaque"))
    }

    @Test func userhashAppliesToNonASCIINamesToo() throws {
        let challenge = try digestChallenge(#"Digest realm="r", nonce="n", qop="auth", userhash=TRUE"#)
        let answer = try responder.authorization(
            for: challenge, user: "東京", password: "p", method: "GET", requestURI: "/", cnonce: "c", nonceCount: 1)
        #expect(answer.headerValue.hasPrefix("Digest username=\"\(Digest.hash(.md5, "東京:r").hexString)\""))
        #expect(answer.headerValue.hasSuffix(", userhash=true"))
        #expect(!answer.headerValue.contains("username*"))
    }

    /// `charset=UTF-8` asks for NFC (RFC 7616 §4): a name and password stored decomposed are
    /// hashed, and the name sent, as their composed forms; without it, as stored.
    @Test func charsetUTF8NormalizesToNFC() throws {
        func answer(_ challenge: String, user: String, password: String) throws -> DigestAuthorization {
            try responder.authorization(
                for: try digestChallenge(challenge), user: user, password: password, method: "GET", requestURI: "/", cnonce: "c", nonceCount: 1)
        }
        let utf8 = #"Digest realm="r", nonce="n", qop="auth", charset=UTF-8"#
        let composed = try answer(utf8, user: "J\u{E4}s", password: "p\u{E9}")
        let decomposed = try answer(utf8, user: "Ja\u{308}s", password: "pe\u{301}")
        #expect(decomposed.response == composed.response)
        #expect(decomposed.headerValue.hasPrefix("Digest username*=UTF-8''J%C3%A4s, "))
        let asStored = try answer(#"Digest realm="r", nonce="n", qop="auth""#, user: "Ja\u{308}s", password: "pe\u{301}")
        #expect(asStored.response != composed.response)
        #expect(asStored.headerValue.hasPrefix("Digest username*=UTF-8''Ja%CC%88s, "))
    }

    @Test func extendedNotationEncodesAllButAttributeCharacters() throws {
        let challenge = try digestChallenge(#"Digest realm="r", nonce="n", qop="auth""#)
        let answer = try responder.authorization(
            for: challenge, user: "é'*%~a", password: "p", method: "GET", requestURI: "/", cnonce: "c", nonceCount: 1)
        #expect(answer.headerValue.hasPrefix("Digest username*=UTF-8''%C3%A9%27%2A%25~a, "))
    }

    @Test func descriptionDoesNotCarryTheAnswer() throws {
        let challenge = try digestChallenge(#"Digest realm="r", nonce="n", qop="auth""#)
        let answer = try responder.authorization(
            for: challenge, user: "u", password: "p", method: "GET", requestURI: "/", cnonce: "c", nonceCount: 3)
        #expect(String(describing: answer) == "DigestAuthorization(algorithm: MD5, qop: auth, nc: 3)")
        #expect(!String(describing: answer).contains(answer.response))
    }

    // MARK: Refusals

    @Test(
        "refuses requests it cannot encode",
        arguments: [
            ("", "GET", "/", "c", UInt32(1), CountersignError.Code.invalidDigestUser),
            ("a\u{0A}b", "GET", "/", "c", 1, .invalidDigestUser),
            ("u", "GE T", "/", "c", 1, .invalidDigestRequest),
            ("u", "", "/", "c", 1, .invalidDigestRequest),
            ("u", "GET", "/a b", "c", 1, .invalidDigestRequest),
            ("u", "GET", "", "c", 1, .invalidDigestRequest),
            ("u", "GET", "/\r\n", "c", 1, .invalidDigestRequest),
            ("u", "GET", "/", "", 1, .invalidDigestRequest),
            ("u", "GET", "/", "a\"b", 1, .invalidDigestRequest),
            ("u", "GET", "/", "a b", 1, .invalidDigestRequest),
            ("u", "GET", "/", "c", 0, .invalidDigestRequest),
        ])
    func refusals(user: String, method: String, uri: String, cnonce: String, nonceCount: UInt32, code: CountersignError.Code) throws {
        let challenge = try digestChallenge(#"Digest realm="r", nonce="n", qop="auth""#)
        let error = #expect(throws: CountersignError.self) {
            try responder.authorization(
                for: challenge, user: user, password: "p", method: method, requestURI: uri, cnonce: cnonce, nonceCount: nonceCount)
        }
        #expect(error?.code == code)
    }

    @Test func rfc2069ModeNeedsNoCnonce() throws {
        let challenge = try digestChallenge(#"Digest realm="r", nonce="n""#)
        let answer = try responder.authorization(
            for: challenge, user: "u", password: "p", method: "GET", requestURI: "/", cnonce: "", nonceCount: 0)
        #expect(answer.qop == nil)
    }
}
