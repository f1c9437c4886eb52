import CountersignCore
import Testing

/// A field list and the challenges it must parse to.
struct ChallengeParseCase: Sendable, CustomTestStringConvertible {
    let name: String
    let fields: [String]
    let expected: [AuthenticationChallenge]

    init(_ name: String, _ fields: [String], _ expected: [AuthenticationChallenge]) {
        self.name = name
        self.fields = fields
        self.expected = expected
    }

    var testDescription: String { name }
}

/// A field list the parser must refuse, with the code it must give.
struct ChallengeRejectCase: Sendable, CustomTestStringConvertible {
    let name: String
    let fields: [String]
    let code: CountersignError.Code
    /// A fragment the message must contain (the position, usually).
    let messageFragment: String

    init(_ name: String, _ fields: [String], _ code: CountersignError.Code, _ messageFragment: String = "") {
        self.name = name
        self.fields = fields
        self.code = code
        self.messageFragment = messageFragment
    }

    var testDescription: String { name }
}

@Suite("Challenge parser")
struct ChallengeParserTests {
    let parser = AuthenticationChallengeParser()

    static let validCases: [ChallengeParseCase] = [
        .init("Basic with realm", [#"Basic realm="simple""#], [authChallenge("Basic", ["realm": "simple"])]),
        .init(
            "RFC 7235 §4.1: two challenges in one field, escaped quotes",
            [#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#],
            [
                authChallenge("Newauth", ["realm": "apps", "type": "1", "title": #"Login to "apps""#]),
                authChallenge("Basic", ["realm": "simple"]),
            ]
        ),
        .init(
            "Apache httpd mod_auth_digest",
            [#"Digest realm="private", nonce="/JKeRm3OBQA=ed8ee1d27e7e7ab50b2e0a7a48a75fc26a2f6d4b", algorithm=MD5, qop="auth""#],
            [
                authChallenge(
                    "Digest",
                    [
                        "realm": "private", "nonce": "/JKeRm3OBQA=ed8ee1d27e7e7ab50b2e0a7a48a75fc26a2f6d4b", "algorithm": "MD5",
                        "qop": "auth",
                    ]
                )
            ]
        ),
        .init("IIS: Negotiate and NTLM as separate fields", ["Negotiate", "NTLM"], [authChallenge("Negotiate"), authChallenge("NTLM")]),
        .init(
            "IIS with Basic as a third field",
            ["Negotiate", "NTLM", #"Basic realm="intranet.example.com""#],
            [authChallenge("Negotiate"), authChallenge("NTLM"), authChallenge("Basic", ["realm": "intranet.example.com"])]
        ),
        .init(
            "Negotiate token68 with padding",
            ["Negotiate YIIGhgYGKwYBBQUCoIIGejCCBnagMDAu=="],
            [authChallenge("Negotiate", token68: "YIIGhgYGKwYBBQUCoIIGejCCBnagMDAu==")]
        ),
        .init("NTLM type-2 message as token68", ["NTLM TlRMTVNTUAACAAAA"], [authChallenge("NTLM", token68: "TlRMTVNTUAACAAAA")]),
        .init("Bearer token68 with dots and padding", ["Bearer abc.def=="], [authChallenge("Bearer", token68: "abc.def==")]),
        .init("a lone word after the scheme is a token68", ["Basic realm"], [authChallenge("Basic", token68: "realm")]),
        .init("token=, with nothing after, is a token68", ["Foo a="], [authChallenge("Foo", token68: "a=")]),
        .init("even when it reads like a parameter without value", ["Basic realm="], [authChallenge("Basic", token68: "realm=")]),
        .init(
            "token68 followed by another challenge",
            [#"Negotiate abc==, Basic realm="x""#],
            [authChallenge("Negotiate", token68: "abc=="), authChallenge("Basic", ["realm": "x"])]
        ),
        .init(
            "RFC 6750 Bearer error",
            [#"Bearer realm="example", error="invalid_token", error_description="The access token expired""#],
            [
                authChallenge(
                    "Bearer", ["realm": "example", "error": "invalid_token", "error_description": "The access token expired"]
                )
            ]
        ),
        .init(
            "empty list elements everywhere",
            [#", Basic realm="a" ,, , Digest realm="b",, nonce="n",  ,"#],
            [authChallenge("Basic", ["realm": "a"]), authChallenge("Digest", ["realm": "b", "nonce": "n"])]
        ),
        .init("only separators", [", ,\t,"], []),
        .init("empty field", [""], []),
        .init("no fields", [], []),
        .init(
            "OWS and BWS around '=' and ','",
            ["Basic \t realm \t= \t\"a\"\t ,  foo=  bar  "],
            [authChallenge("Basic", ["realm": "a", "foo": "bar"])]
        ),
        .init(
            "scheme and parameter names fold case",
            [#"BASIC REALM="x", Charset="UTF-8""#],
            [authChallenge("basic", ["realm": "x", "charset": "UTF-8"])]
        ),
        .init("challenges with no parameters", ["Newauth, Other"], [authChallenge("Newauth"), authChallenge("Other")]),
        .init("empty realm", [#"Basic realm="""#], [authChallenge("Basic", ["realm": ""])]),
        .init(
            "duplicate parameters are kept (and reported, not answered)",
            [#"Basic realm="a", realm="b""#],
            [authChallenge("Basic", ["realm": "a", "realm": "b"])]
        ),
        .init(
            "backslash escapes: quote, backslash, ordinary character",
            [#"Basic realm="a\"b\\c\d""#],
            [authChallenge("Basic", ["realm": #"a"b\cd"#])]
        ),
        .init("escaped tab and space", ["X a=\"\\\t\\ \""], [authChallenge("X", ["a": "\t "])]),
        .init("non-ASCII inside a quoted-string", [#"Basic realm="Zürich 東京""#], [authChallenge("Basic", ["realm": "Zürich 東京"])]),
        .init(
            "token values",
            ["Digest algorithm=SHA-256, realm=r, nonce=n, stale=TRUE"],
            [authChallenge("Digest", ["algorithm": "SHA-256", "realm": "r", "nonce": "n", "stale": "TRUE"])]
        ),
        .init(
            "a parameter right after 'scheme,' belongs to that scheme",
            [#"Basic, realm="x""#],
            [authChallenge("Basic", ["realm": "x"])]
        ),
        .init(
            "a comma inside a quoted-string does not split",
            [#"Digest realm="a, Basic realm=b", qop="auth,auth-int", nonce="n""#],
            [authChallenge("Digest", ["realm": "a, Basic realm=b", "qop": "auth,auth-int", "nonce": "n"])]
        ),
        .init(
            "RFC 7616 §3.7: one Digest challenge per algorithm",
            [
                #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
                #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
            ],
            [
                authChallenge(
                    "Digest",
                    [
                        "realm": "http-auth@example.org", "qop": "auth, auth-int", "algorithm": "SHA-256",
                        "nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "opaque": "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS",
                    ]
                ),
                authChallenge(
                    "Digest",
                    [
                        "realm": "http-auth@example.org", "qop": "auth, auth-int", "algorithm": "MD5",
                        "nonce": "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "opaque": "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS",
                    ]
                ),
            ]
        ),
        .init(
            "the second word after a scheme starts a new challenge only after a comma",
            [#"Basic realm="a", Digest realm="b", nonce="c", Negotiate"#],
            [authChallenge("Basic", ["realm": "a"]), authChallenge("Digest", ["realm": "b", "nonce": "c"]), authChallenge("Negotiate")]
        ),
        .init(
            "a name followed by spaces and '=' is a parameter", [#"Basic realm="a", Foo =bar"#],
            [authChallenge("Basic", ["realm": "a", "foo": "bar"])]),
    ]

    @Test("parses", arguments: validCases)
    func parses(_ testCase: ChallengeParseCase) throws {
        let parsed = try parser.parse(testCase.fields)
        #expect(parsed == testCase.expected)
    }

    static let rejectCases: [ChallengeRejectCase] = [
        .init("unterminated quoted-string", [#"Basic realm="simple"#], .malformedChallenge, "byte 12: unterminated"),
        .init("backslash at the very end", [#"Basic realm="simple\"#], .malformedChallenge, "unterminated"),
        .init("control character in a quoted-string", ["Basic realm=\"a\u{01}b\""], .malformedChallenge, "control character 0x1"),
        .init("NUL in a quoted-string", ["Basic realm=\"a\u{00}\""], .malformedChallenge, "control character 0x0"),
        .init("DEL in a quoted-string", ["Basic realm=\"a\u{7F}\""], .malformedChallenge, "control character 0x7F"),
        .init("escaped control character", ["Basic realm=\"a\\\u{0A}\""], .malformedChallenge, "cannot be escaped"),
        .init("CR LF after a value", ["Basic realm=\"a\"\r\n"], .malformedChallenge, "control character 0xD"),
        .init("obs-fold inside a field", ["Basic realm=\"a\",\r\n nonce=\"b\""], .malformedChallenge, "byte 16"),
        .init("missing value at the end", ["Basic a=b, realm="], .malformedChallenge, "byte 17: missing auth-param value"),
        .init("missing value before a comma", ["Basic a=b, realm=, nonce=x"], .malformedChallenge, "byte 17"),
        // `realm=` alone is a token68; what follows it cannot be an auth-param.
        .init(
            "token68 that looks like a bare name=", ["Basic realm=, nonce=x"], .malformedChallenge, "byte 14: auth-param after a token68"),
        .init("parameter before any scheme", [#"realm="x""#], .malformedChallenge, "byte 0: auth-param before any auth-scheme"),
        .init("starts with '='", [#"="x""#], .malformedChallenge, "byte 0"),
        .init("starts with a quote", [#""Basic""#], .malformedChallenge, "byte 0"),
        .init("two parameters without a comma", [#"Basic realm="a" nonce="b""#], .malformedChallenge, "byte 16: expected ','"),
        .init("junk right after a quoted-string", [#"Basic realm="a"x"#], .malformedChallenge, "byte 15"),
        .init("two tokens as a value", ["Basic realm=a b"], .malformedChallenge, "byte 14"),
        .init("parameter after a token68 challenge", ["Negotiate abc=, realm=x"], .malformedChallenge, "after a token68"),
        .init("quoted-string where a token68 or name is expected", [#"Basic "realm""#], .malformedChallenge, "byte 6"),
        .init("scheme glued to a non-token character", ["Basic@ realm=x"], .malformedChallenge, "byte 5: expected a space"),
        .init("token68 padding followed by more characters", ["Negotiate ab==cd"], .malformedChallenge, "byte 13"),
        .init("non-ASCII outside quotes", ["Basic realm=Zürich"], .malformedChallenge, "non-ASCII byte 0xC3"),
        .init("second field is the malformed one", ["Basic realm=\"a\"", "Digest realm=\"b"], .malformedChallenge, "value #2 at byte 13"),
        .init(
            "one field over 16 KiB",
            ["Basic realm=\"" + String(repeating: "a", count: 16 * 1024) + "\""],
            .challengeTooLarge
        ),
        .init(
            "fields over 64 KiB together",
            Array(repeating: "Basic realm=\"" + String(repeating: "a", count: 15_000) + "\"", count: 5),
            .challengeTooLarge
        ),
        .init(
            "33 challenges in one field",
            [Array(repeating: "Foo", count: 33).joined(separator: ", ")],
            .tooManyChallenges,
            "more than 32 challenges"
        ),
        .init("33 challenges across fields", Array(repeating: "Foo, Bar, Baz", count: 11), .tooManyChallenges),
        .init("65 field values", Array(repeating: "", count: 65), .tooManyChallenges),
        .init(
            "65 parameters in one challenge",
            ["Foo " + (0..<65).map { "p\($0)=v" }.joined(separator: ", ")],
            .tooManyParameters,
            "more than 64 auth-params"
        ),
    ]

    @Test("refuses with a stable code", arguments: rejectCases)
    func refuses(_ testCase: ChallengeRejectCase) {
        let error = #expect(throws: CountersignError.self) {
            try parser.parse(testCase.fields)
        }
        #expect(error?.code == testCase.code)
        // Foundation's `contains` says an empty fragment is not contained: check only real ones.
        if !testCase.messageFragment.isEmpty {
            #expect(error?.message.contains(testCase.messageFragment) == true, "message: \(error?.message ?? "none")")
        }
    }

    @Test func keepsTheSchemeSpellingAndComparesItCaseInsensitively() throws {
        let parsed = try parser.parse(["dIgEsT realm=x, nonce=y", "NewAuth"])
        #expect(parsed.map(\.schemeName) == ["dIgEsT", "NewAuth"])
        #expect(parsed[0].scheme == .digest)
        #expect(parsed[1].scheme == AuthenticationScheme(name: "newauth"))
        #expect(parsed[1].scheme == .other("NEWAUTH"))
        #expect(AuthenticationScheme.other("Basic") == .basic)
        #expect(Set([AuthenticationScheme.other("NTLM"), .ntlm]).count == 1)
    }

    @Test func looksUpParametersCaseInsensitively() throws {
        let parsed = try #require(try parser.parse([#"Digest Realm="r", NONCE="n", realm="second""#]).first)
        #expect(parsed.parameter("realm") == "r")
        #expect(parsed.parameter("Nonce") == "n")
        #expect(parsed.realm == "r")
        #expect(parsed.parameter("opaque") == nil)
        #expect(parsed.duplicateParameterName == "realm")
        #expect(parsed.parameters.map(\.name) == ["realm", "nonce", "realm"])
    }

    @Test func noDuplicateIsReportedWhenNamesDiffer() throws {
        let parsed = try parser.parse([#"Digest realm="r", nonce="n""#])
        #expect(parsed.first?.duplicateParameterName == nil)
    }

    @Test func parsesRawBytesAndRefusesInvalidUTF8() throws {
        let valid = try parser.parse(utf8FieldValues: [Array(#"Basic realm="Zürich""#.utf8)])
        #expect(valid == [authChallenge("Basic", ["realm": "Zürich"])])

        var invalid = Array(#"Basic realm="x"#.utf8)
        invalid.append(contentsOf: [0xFF, 0xFE, UInt8(ascii: "\"")])
        let error = #expect(throws: CountersignError.self) {
            try parser.parse(utf8FieldValues: [invalid])
        }
        #expect(error?.code == .malformedChallenge)
        #expect(error?.message.contains("not valid UTF-8") == true)
    }

    @Test func honoursCustomLimits() throws {
        let strict = AuthenticationChallengeParser(
            limits: .init(
                maximumFieldValueBytes: 10, maximumTotalBytes: 15, maximumFieldValues: 3, maximumChallenges: 2,
                maximumParametersPerChallenge: 1)
        )
        #expect(throws: CountersignError(.challengeTooLarge, "")) { try strict.parse(["Basic realm=x"]) }
        #expect(throws: CountersignError(.challengeTooLarge, "")) { try strict.parse(["Basic a=b", "Basic c=d"]) }
        #expect(throws: CountersignError(.tooManyChallenges, "")) { try strict.parse(["", "", "", ""]) }
        #expect(throws: CountersignError(.tooManyChallenges, "")) { try strict.parse(["A, B, C"]) }
        #expect(throws: CountersignError(.tooManyParameters, "")) { try strict.parse(["A a=1,b=2"]) }
        #expect(try strict.parse(["A a=1", "B"]).count == 2)
    }

    @Test func exactlyAtTheLimitsIsAccepted() throws {
        let thirtyTwo = Array(repeating: "Foo", count: 32).joined(separator: ", ")
        #expect(try parser.parse([thirtyTwo]).count == 32)
        let sixtyFour = "Foo " + (0..<64).map { "p\($0)=v" }.joined(separator: ", ")
        #expect(try parser.parse([sixtyFour]).first?.parameters.count == 64)
        let full = "Basic realm=\"" + String(repeating: "a", count: 16 * 1024 - 14) + "\""
        #expect(full.utf8.count == 16 * 1024)
        #expect(try parser.parse([full]).count == 1)
    }

    @Test func hostileInputsOfMaximumSizeAreRefusedOrParsed() throws {
        // Shapes that make naive parsers backtrack: each must come back with an answer at once.
        let size = 16 * 1024
        let hostile: [String] = [
            "Basic realm=\"" + String(repeating: "\\\"", count: size / 2 - 8),
            "Foo " + String(repeating: "a", count: size - 4),
            "Foo " + String(repeating: "=", count: size - 4),
            "Foo a" + String(repeating: "=", count: size - 6) + "b",
            String(repeating: ",", count: size),
            String(repeating: " ", count: size),
            "Foo " + String(repeating: "a=b,", count: (size - 4) / 4),
            "Foo a=\"" + String(repeating: "\\a", count: (size - 8) / 2) + "\"",
        ]
        for field in hostile {
            #expect(field.utf8.count <= size)
            do {
                _ = try parser.parse([field])
            } catch {
                #expect(!error.code.rawValue.isEmpty)
            }
        }
        let escaped = try parser.parse(["Foo a=\"" + String(repeating: "\\a", count: 8000) + "\""])
        #expect(escaped.first?.parameter("a") == String(repeating: "a", count: 8000))
    }

    @Test func constructorsRefuseWhatCouldNotBeWritten() {
        #expect(throws: CountersignError(.malformedChallenge, "")) { try AuthenticationChallenge(scheme: "Bad Scheme") }
        #expect(throws: CountersignError(.malformedChallenge, "")) { try AuthenticationChallenge(scheme: "") }
        #expect(throws: CountersignError(.malformedChallenge, "")) { try AuthenticationChallenge(scheme: "Negotiate", token68: "=abc") }
        #expect(throws: CountersignError(.malformedChallenge, "")) { try AuthenticationChallenge(scheme: "Negotiate", token68: "a=b") }
        #expect(throws: CountersignError(.malformedChallenge, "")) { try AuthenticationParameter(name: "re alm", value: "x") }
        #expect(throws: CountersignError(.malformedChallenge, "")) { try AuthenticationParameter(name: "realm", value: "a\nb") }
        #expect((try? AuthenticationParameter(name: "Realm", value: "tab\tok"))?.name == "realm")
    }

    @Test func serializesAsAFieldValue() {
        #expect(authChallenge("Basic", ["realm": #"a "b" \c"#]).headerValue == #"Basic realm="a \"b\" \\c""#)
        #expect(authChallenge("Negotiate", token68: "abc==").headerValue == "Negotiate abc==")
        #expect(authChallenge("NTLM").headerValue == "NTLM")
        #expect(
            AuthenticationChallenge.headerValue([
                authChallenge("Newauth", ["realm": "apps", "type": "1"]), authChallenge("Basic", ["realm": "simple"]),
            ])
                == #"Newauth realm="apps", type="1", Basic realm="simple""#
        )
    }
}
