import CountersignCore
import Foundation
import Testing

@Suite("Raw responses")
struct RawResponseTests {
    func response(
        status: Int = 401,
        headers: [[String]],
        method: String = "GET",
        url: String = "https://files.example.com/reports/q3.pdf?view=1#page=2",
        requestTarget: String? = nil,
        proxy: ForwardedProxy? = nil
    ) -> RawResponse {
        RawResponse(
            taskId: "task-1",
            status: status,
            headers: headers,
            request: ForwardedRequest(method: method, url: url, requestTarget: requestTarget),
            proxy: proxy
        )
    }

    func code(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch let error as CountersignError {
            return error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    @Test func gathersEveryChallengeFieldInOrderWhateverItsCase() throws {
        let context = try response(headers: [
            ["Date", "Mon, 23 Nov 2026 10:00:00 GMT"],
            ["www-authenticate", "Negotiate"],
            ["Content-Type", "text/html"],
            ["WWW-Authenticate", #"NTLM, Basic realm="files""#],
            ["Proxy-Authenticate", #"Basic realm="not for a 401""#],
        ]).validated()
        #expect(context.challenges.map(\.scheme) == [.negotiate, .ntlm, .basic])
        #expect(context.challenges[2].realm == "files")
        #expect(context.target == .init(host: "files.example.com", port: 443, protocolName: "https", isProxy: false))
        #expect(context.requestTarget == "/reports/q3.pdf?view=1")
        #expect(context.authorizationFieldName == "Authorization")
    }

    @Test func aProxyChallengeIsAboutTheProxy() throws {
        let context = try response(
            status: 407,
            headers: [["Proxy-Authenticate", #"Basic realm="proxy""#], ["WWW-Authenticate", #"Basic realm="origin""#]],
            url: "http://api.example.com/v1/items",
            proxy: ForwardedProxy(host: "Proxy.Corp.example.com", port: 3128)
        ).validated()
        #expect(context.challenges.map(\.realm) == ["proxy"])
        #expect(context.target == .init(host: "proxy.corp.example.com", port: 3128, protocolName: "http", isProxy: true))
        #expect(context.authorizationFieldName == "Proxy-Authorization")
        // A request through an HTTP proxy carries the absolute URL in its request line.
        #expect(context.requestTarget == "http://api.example.com/v1/items")
        let space = context.protectionSpace(scheme: .basic, realm: "proxy")
        #expect(space.isProxy && space.host == "proxy.corp.example.com" && space.port == 3128 && space.proxyType == "http")
        #expect(space.method == .httpBasic)
    }

    @Test func connectThroughAProxyTargetsTheAuthority() throws {
        let context = try response(
            status: 407,
            headers: [["Proxy-Authenticate", #"Digest realm="p", nonce="n", qop=auth"#]],
            method: "CONNECT",
            url: "https://[2001:db8::1]/",
            proxy: ForwardedProxy(host: "proxy", port: 8080, type: "https")
        ).validated()
        #expect(context.requestTarget == "[2001:db8::1]:443")
        #expect(context.target.protocolName == "https")
    }

    @Test func defaultsAndOverridesOfTheRequestTarget() throws {
        let plain = try response(headers: [["WWW-Authenticate", "Basic"]], url: "http://h.example:8080").validated()
        #expect(plain.requestTarget == "/")
        #expect(plain.target.port == 8080 && plain.target.protocolName == "http")
        let escaped = try response(headers: [["WWW-Authenticate", "Basic"]], url: "http://h.example/a%20b/c?q=%2F").validated()
        #expect(escaped.requestTarget == "/a%20b/c?q=%2F")
        // As the request line carried it, not re-encoded: strict servers compare Digest's uri with it.
        let raw = try response(headers: [["WWW-Authenticate", "Basic"]], url: "http://user@h.example/a|b/%zz?q=x|y#frag").validated()
        #expect(raw.requestTarget == "/a|b/%zz?q=x|y")
        let queryOnly = try response(headers: [["WWW-Authenticate", "Basic"]], url: "http://h.example?q=1").validated()
        #expect(queryOnly.requestTarget == "/?q=1")
        let nonASCII = try response(headers: [["WWW-Authenticate", "Basic"]], url: "http://h.example/b\u{FC}cher").validated()
        #expect(nonASCII.requestTarget == "/b%C3%BCcher")
        let overridden = try response(headers: [["WWW-Authenticate", "Basic"]], requestTarget: "*").validated()
        #expect(overridden.requestTarget == "*")
    }

    @Test func spacesCarryTheRealmOnlyWhereItNamesSomething() throws {
        let context = try response(headers: [["WWW-Authenticate", "Basic"]]).validated()
        #expect(context.protectionSpace(scheme: .digest, realm: "r").realm == "r")
        #expect(context.protectionSpace(scheme: .digest, realm: "r").receivesCredentialSecurely == true)
        #expect(context.protectionSpace(scheme: .ntlm, realm: "ignored").realm == nil)
        #expect(context.protectionSpace(scheme: .ntlm, realm: nil).method == .ntlm)
        #expect(RawResponseContext.method(for: .other("newauth")).rawValue == "HTTPScheme:newauth")
        #expect(!RawResponseContext.method(for: .other("newauth")).isKnown)
    }

    @Test func entityBodiesForAuthInt() throws {
        var raw = response(headers: [["WWW-Authenticate", "Basic"]])
        raw.request.body = Data("hello".utf8).base64EncodedString()
        #expect(try raw.validated().entityBody == .bytes(Array("hello".utf8)))
        raw.request.body = nil
        raw.request.bodyHash = ForwardedBodyHash(algorithm: "sha-256", value: String(repeating: "A", count: 64))
        #expect(try raw.validated().entityBody == .hash(.sha256, hex: String(repeating: "A", count: 64)))
        raw.request.bodyHash = ForwardedBodyHash(algorithm: "SHA-256", value: String(repeating: "g", count: 64))
        #expect(code { try raw.validated() } == "invalid_field")
        raw.request.bodyHash = ForwardedBodyHash(algorithm: "SHA-1", value: String(repeating: "a", count: 40))
        #expect(code { try raw.validated() } == "invalid_enum_value")
        raw.request.bodyHash = ForwardedBodyHash(algorithm: "MD5", value: String(repeating: "a", count: 32))
        raw.request.body = "aGk="
        #expect(code { try raw.validated() } == "invalid_field")
        raw.request.bodyHash = nil
        raw.request.body = "not base64!"
        #expect(code { try raw.validated() } == "invalid_field")
    }

    @Test(
        "refuses malformed requests with a stable code",
        arguments: [
            (RawResponse(taskId: "t", status: 200, headers: [], request: .init(method: "GET", url: "https://h/")), "invalid_enum_value"),
            (RawResponse(taskId: "", status: 401, headers: [["WWW-Authenticate", "Basic"]], request: .init(method: "GET", url: "https://h/")), "invalid_field"),
            (RawResponse(taskId: "t", status: 407, headers: [["Proxy-Authenticate", "Basic"]], request: .init(method: "GET", url: "https://h/")), "missing_field"),
            (
                RawResponse(
                    taskId: "t", status: 401, headers: [["WWW-Authenticate", "Basic"]], request: .init(method: "GET", url: "https://h/"),
                    proxy: .init(host: "p", port: 1)
                ), "invalid_field"
            ),
            (RawResponse(taskId: "t", status: 401, headers: [["WWW-Authenticate"]], request: .init(method: "GET", url: "https://h/")), "invalid_field"),
            (RawResponse(taskId: "t", status: 401, headers: [["Bad Name", "x"]], request: .init(method: "GET", url: "https://h/")), "invalid_field"),
            (RawResponse(taskId: "t", status: 401, headers: [["WWW-Authenticate", "Basic"]], request: .init(method: "GET", url: "ftp://h/")), "invalid_field"),
            (RawResponse(taskId: "t", status: 401, headers: [["WWW-Authenticate", "Basic"]], request: .init(method: "GET", url: "/relative")), "invalid_field"),
            (RawResponse(taskId: "t", status: 401, headers: [["WWW-Authenticate", "Basic"]], request: .init(method: "GET", url: "https://h/a b")), "invalid_field"),
            (RawResponse(taskId: "t", status: 401, headers: [["WWW-Authenticate", "Basic"]], request: .init(method: "G T", url: "https://h/")), "invalid_field"),
            (
                RawResponse(taskId: "t", status: 401, headers: [["WWW-Authenticate", "Basic"]], request: .init(method: "GET", url: "https://h/", requestTarget: "/a b")),
                "invalid_field"
            ),
            (
                RawResponse(
                    taskId: "t", status: 407, headers: [["Proxy-Authenticate", "Basic"]], request: .init(method: "GET", url: "https://h/"),
                    proxy: .init(host: "p", port: 0)
                ), "invalid_field"
            ),
            (
                RawResponse(
                    taskId: "t", status: 407, headers: [["Proxy-Authenticate", "Basic"]], request: .init(method: "GET", url: "https://h/"),
                    proxy: .init(host: "p", port: 8080, type: "socks")
                ), "invalid_enum_value"
            ),
            (RawResponse(taskId: "t", status: 401, headers: [], request: .init(method: "GET", url: "https://h/")), "missing_challenge"),
            (RawResponse(taskId: "t", status: 401, headers: [["WWW-Authenticate", " , ,"]], request: .init(method: "GET", url: "https://h/")), "missing_challenge"),
            (RawResponse(taskId: "t", status: 407, headers: [["WWW-Authenticate", "Basic"]], request: .init(method: "GET", url: "https://h/"), proxy: .init(host: "p", port: 1)), "missing_challenge"),
        ]
    )
    func refusesMalformedRequests(raw: RawResponse, expected: String) {
        #expect(code { try raw.validated() } == expected)
    }

    /// The host is checked as a challenge's is, once percent-decoded: a NUL could not be stored,
    /// and a control character would be recorded as the decision's host.
    @Test(arguments: ["http://a.example.com%00/", "http://evil%0Ahost/", "http://a%1Bb/", "http://a%20b/", "http://a%E2%80%A8b/", "http://[zz]/", "http://./", "http://a..b/"])
    func refusesURLsThatNameNoHost(url: String) {
        let raw = RawResponse(taskId: "t", status: 401, headers: [["WWW-Authenticate", "Basic"]], request: .init(method: "GET", url: url))
        #expect(code { try raw.validated() } == "invalid_field", "\(url)")
    }

    /// A URL whose host parsers disagree on (a backslash: `/` to WHATWG parsers, user info to
    /// Foundation), or whose port is more digits than an Int holds (no port to Foundation, so the
    /// default one): a credential must not go to a host or port the client did not ask.
    @Test(arguments: [
        "https://evil.example\\@intranet.example.com/", "https://intranet.example.com\\evil/", "https://intranet.example.com:9223372036854775808/",
        "https://[::1]:99999999999999999999/",
    ])
    func refusesURLsReadTwoWays(url: String) {
        let raw = RawResponse(taskId: "t", status: 401, headers: [["WWW-Authenticate", "Basic"]], request: .init(method: "GET", url: url))
        #expect(code { try raw.validated() } == "invalid_field", "\(url)")
    }

    /// The URL's host is taken as written (IPv6 in brackets, lowercased; Foundation's own IDNA
    /// mapping is kept out of the parse), and then recorded and matched as the same host sent as
    /// a challenge's would be: in its ASCII form when it has one.
    @Test(arguments: [
        ("http://[::1]/", "[::1]", "[::1]"), ("http://[2001:DB8::1]:8080/x", "[2001:db8::1]", "[2001:db8::1]"), ("http://Ⅸ/", "ⅸ", "ix"),
        ("http://´/", "´", "´"), ("http://%C2%B4/", "´", "´"), ("http://Bücher.Example/índex?q=ü", "bücher.example", "xn--bcher-kva.example"),
    ])
    func theURLsHostIsTheChallengesHost(url: String, host: String, folded: String) throws {
        let context = try response(headers: [["WWW-Authenticate", "Basic"]], url: url).validated()
        #expect(context.target.host == host)
        #expect(ProtectionSpace(host: host, port: context.target.port, protocolName: "http", realm: nil, authenticationMethod: .httpBasic).normalized.host == folded)
    }

    @Test func aForbiddenResponseNeedsNoChallenge() throws {
        let context = try response(status: 403, headers: [["Content-Type", "text/html"]]).validated()
        #expect(context.challenges.isEmpty)
        #expect(context.status == 403)
    }

    @Test func hostileChallengeFieldsGetTheParsersCode() {
        let huge = "Basic realm=\"" + String(repeating: "a", count: 70_000) + "\""
        #expect(code { try response(headers: [["WWW-Authenticate", huge]]).validated() } == "challenge_too_large")
        let wide = (0..<5).map { _ in ["WWW-Authenticate", "Basic realm=\"" + String(repeating: "b", count: 15_000) + "\""] }
        #expect(code { try response(headers: wide).validated() } == "challenge_too_large")
        #expect(code { try response(headers: [["WWW-Authenticate", #"Digest realm="unterminated, nonce="n"#]]).validated() } == "malformed_challenge")
        #expect(code { try response(headers: [["WWW-Authenticate", "Basic realm=\"\u{7}\""]]).validated() } == "malformed_challenge")
        let parameters = "Digest " + (0..<1500).map { "p\($0)=v" }.joined(separator: ",")
        #expect(code { try response(headers: [["WWW-Authenticate", parameters]]).validated() } == "too_many_parameters")
        let lines = (0..<5000).map { _ in ["WWW-Authenticate", "Basic"] }
        #expect(code { try response(headers: lines).validated() } == "too_many_challenges")
        let challenges = Array(repeating: "Basic", count: 40).joined(separator: ", ")
        #expect(code { try response(headers: [["WWW-Authenticate", challenges]]).validated() } == "too_many_challenges")
        // Other headers never reach the parser; only their number is bounded.
        let many = (0..<2001).map { ["X-Filler-\($0)", "x"] } + [["WWW-Authenticate", "Basic"]]
        #expect(code { try response(headers: many).validated() } == "invalid_field")
    }

    @Test func theDigestExampleOfTheAPIDocumentIsWhatGetsWritten() throws {
        // openapi.yaml, POST /v1/sessions/{sessionId}/responses: request example `digest`, answer example `digest`.
        let nonce = "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v"
        let opaque = "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
        let context = try response(
            headers: [
                ["Date", "Mon, 23 Nov 2026 10:00:00 GMT"],
                ["WWW-Authenticate", #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="\#(nonce)", opaque="\#(opaque)""#],
                ["WWW-Authenticate", #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="\#(nonce)", opaque="\#(opaque)""#],
                ["Content-Type", "text/html"],
            ],
            url: "https://www.example.org/dir/index.html"
        ).validated()
        let credential = Credential(
            id: UUID(), tenantID: UUID(), kind: .password, attributes: CredentialAttributes(host: "www.example.org", account: "Mufasa"),
            domain: nil, label: nil, owner: .tenant(submittedBy: nil), secretVersion: 1, createdAt: Date(), updatedAt: Date()
        )
        let plan = try ResponseDecider.plan(context, policy: .empty) { _ in
            DecisionPlan(disposition: .useCredential, credential: credential, scope: .task, source: .policy, reason: "example")
        }
        let digest = try #require(plan.chosen?.digest)
        let answer = try DigestResponder(hash: openSSLDigestHash).authorization(
            for: digest, user: "Mufasa", password: "Circle of Life", method: context.method, requestURI: context.requestTarget,
            entityBody: context.entityBody, cnonce: "3f1c2a9e8b7d6c5f4e3d2c1b0a998877", nonceCount: 1
        )
        #expect(
            answer.headerValue
                == #"Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=SHA-256, nonce="\#(nonce)", nc=00000001, cnonce="3f1c2a9e8b7d6c5f4e3d2c1b0a998877", qop=auth, response="614c0db6b7f344d0497f0a9d236bb8614b529cd1a8ecebe238b082f058194bc0", opaque="\#(opaque)""#
        )
    }
}
