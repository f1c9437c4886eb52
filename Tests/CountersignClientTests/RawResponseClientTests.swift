@testable import CountersignClient
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `answerRawResponse` in the typed client: what it sends, what it refuses to send, what it never
/// shows. (Retries are in APIClientTests' table; the real service in RawResponseEndToEndTests.)
@Suite("The API client: raw responses", .urlSessionSlot)
struct RawResponseClientTests {
    static let basic401 = RawResponse(
        taskId: "task-42",
        status: 401,
        headers: [ResponseHeader("Content-Type", "text/html"), ResponseHeader("WWW-Authenticate", #"Basic realm="Intranet""#)],
        request: ForwardedRequest(method: "GET", url: "https://intranet.example.com/index.html")
    )

    @Test("sends the contract's members: headers as ordered pairs, absent options left out")
    func body() async throws {
        try await FakeCountersign.run { fake in
            let session = UUID()
            let digest = RawResponse(
                taskId: "task-7",
                status: 407,
                headers: [
                    ResponseHeader("Proxy-Authenticate", "Negotiate"),
                    ResponseHeader("Proxy-Authenticate", #"Digest realm="corp", qop="auth-int", nonce="n""#),
                ],
                request: ForwardedRequest(method: "POST", url: "http://api.example.com/upload", body: Data("payload".utf8)),
                proxy: ForwardedProxy(host: "proxy.corp.example.com", port: 3128, type: .http),
                previousDecisionId: UUID()
            )
            let answer = try await APIClientTests.client(fake).answerRawResponse(digest, in: session)
            #expect(answer.disposition == .useCredential)
            #expect(answer.reasonCode == .authorization)
            #expect(answer.chosenChallenge?.scheme == "Basic")

            let request = try #require(fake.recorder.all.only)
            #expect(request.path == "/v1/sessions/\(session.uuidString.lowercased())/responses")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any])
            #expect(Set(json.keys) == ["taskId", "status", "headers", "request", "proxy", "previousDecisionId"])
            #expect(json["headers"] as? [[String]] == [["Proxy-Authenticate", "Negotiate"], ["Proxy-Authenticate", #"Digest realm="corp", qop="auth-int", nonce="n""#]])
            let forwarded = try #require(json["request"] as? [String: Any])
            #expect(Set(forwarded.keys) == ["method", "url", "body"])
            #expect(forwarded["body"] as? String == Data("payload".utf8).base64EncodedString())
            let proxy = try #require(json["proxy"] as? [String: Any])
            #expect(proxy["host"] as? String == "proxy.corp.example.com" && proxy["port"] as? Int == 3128 && proxy["type"] as? String == "http")

            _ = try await APIClientTests.client(fake).answerRawResponse(Self.basic401, in: session)
            let plain = try #require(try JSONSerialization.jsonObject(with: Data(fake.recorder.bodies("response").last!.utf8)) as? [String: Any])
            #expect(Set(plain.keys) == ["taskId", "status", "headers", "request"])
        }
    }

    @Test("a status the service does not take, or a 407 without its proxy, fails before anything is sent")
    func refusedLocally() async throws {
        try await FakeCountersign.run { fake in
            var wrongStatus = Self.basic401
            wrongStatus.status = 500
            var proxyless = Self.basic401
            proxyless.status = 407
            for response in [wrongStatus, proxyless] {
                do throws(CountersignClientError) {
                    _ = try await APIClientTests.client(fake).answerRawResponse(response, in: UUID())
                    Issue.record("sent \(response.status)")
                } catch {
                    guard case .invalidRequest = error else {
                        Issue.record("\(error)")
                        continue
                    }
                }
            }
            #expect(fake.recorder.all.isEmpty)
        }
    }

    @Test("the service's codes arrive as they are")
    func serviceCodes() async throws {
        let script = FakeCountersign.Script(response: { _ in .error(400, CountersignClientError.Code.malformedChallenge) })
        try await FakeCountersign.run(script) { fake in
            do throws(CountersignClientError) {
                _ = try await APIClientTests.client(fake).answerRawResponse(Self.basic401, in: UUID())
                Issue.record("no error")
            } catch {
                #expect(error.status == 400)
                #expect(error.serviceCode == "malformed_challenge")
            }
        }
    }

    @Test("the returned header's value never shows: description, debug description, dump, errors")
    func headerRedacted() async throws {
        let secret = "Basic c3ZjLWZsZWV0Om5ldmVyLXByaW50LW1l"
        try await FakeCountersign.run(.init(response: { _ in .json(200, FakeCountersign.responseAnswerJSON(authorization: secret)) })) { fake in
            let answer = try await APIClientTests.client(fake).answerRawResponse(Self.basic401, in: UUID())
            let header = try #require(answer.authorization)
            #expect(header.value == secret)
            #expect(header.name == .authorization)
            var dumped = ""
            dump(answer, to: &dumped)
            dump(header, to: &dumped)
            for text in ["\(answer)", String(reflecting: answer), "\(header)", String(reflecting: header), "\(answer.authorization as Any)", dumped] {
                #expect(!text.contains("c3ZjLWZsZWV0Om5ldmVyLXByaW50LW1l"), "\(text)")
            }
            #expect("\(header)" == "Authorization: redacted")

            var request = URLRequest(url: URL(string: "https://intranet.example.com/index.html")!)
            header.apply(to: &request)
            #expect(request.value(forHTTPHeaderField: "Authorization") == secret)
        }
        // A body that is not the contract's is refused without being quoted.
        let garbage = #"{"authorization": {"name": "Authorization", "value": "\#(secret)"}}"#
        try await FakeCountersign.run(.init(response: { _ in .json(200, garbage) })) { fake in
            do throws(CountersignClientError) {
                _ = try await APIClientTests.client(fake).answerRawResponse(Self.basic401, in: UUID())
                Issue.record("no error")
            } catch {
                guard case .decoding(let operation, _) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(operation == "answerRawResponse")
                #expect(!"\(error)".contains("c3ZjLWZsZWV0"))
            }
        }
    }

    @Test("an NTLM answer's password and a forwarded request body never show")
    func otherSecretsRedacted() throws {
        let answer = ResponseAnswer(
            decisionId: UUID(),
            disposition: .useCredential,
            reasonCode: .ntlmHandshake,
            credential: .password(user: "svc", password: "ntlm-pass-word", domain: "CORP"),
            source: .policy,
            reason: "released",
            protectionSpace: .init(host: "h", port: 443, protocolName: "https", authenticationMethod: .ntlm)
        )
        let request = ForwardedRequest(method: "POST", url: "https://h/login", body: Data("user=svc&password=form-pass-word".utf8))
        var dumped = ""
        dump(answer, to: &dumped)
        dump(request, to: &dumped)
        for text in ["\(answer)", String(reflecting: answer), "\(request)", String(reflecting: request), dumped] {
            #expect(!text.contains("ntlm-pass-word") && !text.contains("form-pass-word"), "\(text)")
        }
        #expect("\(request)".contains("32 bytes"))
    }

    @Test("built from an HTTPURLResponse: the answering URL, the request's method, challenge fields first, no cookie")
    func fromHTTPURLResponse() throws {
        let url = URL(string: "http://127.0.0.1:8081/private?x=1")!
        let http = try #require(
            HTTPURLResponse(
                url: url,
                statusCode: 401,
                httpVersion: "HTTP/1.1",
                headerFields: [
                    "Content-Type": "text/plain", "WWW-Authenticate": #"Digest realm="r", nonce="n", Basic realm="r""#, "Date": "now",
                    "Set-Cookie": "session=app-secret",
                ]
            )
        )
        var request = URLRequest(url: URL(string: "http://127.0.0.1:8081/redirected-from")!)
        request.httpMethod = "PUT"
        let raw = RawResponse(taskId: "t", response: http, request: request)
        #expect(raw.status == 401)
        #expect(raw.request.method == "PUT")
        #expect(raw.request.url == url.absoluteString)
        #expect(raw.headers.first == ResponseHeader("WWW-Authenticate", #"Digest realm="r", nonce="n", Basic realm="r""#))
        // The app's cookie stays with the app, as with forwarded challenges.
        #expect(raw.headers.map { $0.name.lowercased() } == ["www-authenticate", "content-type", "date"])
        #expect(raw.proxy == nil && raw.previousDecisionId == nil)
    }

    @Test("built from an HTTPURLResponse: a password in the URL is not forwarded")
    func urlPasswordWithheld() throws {
        let url = URL(string: "https://alice:url-pass-word@intranet.example.com:8443/private?x=1")!
        let http = try #require(HTTPURLResponse(url: url, statusCode: 401, httpVersion: "HTTP/1.1", headerFields: ["WWW-Authenticate": #"Basic realm="r""#]))
        let raw = RawResponse(taskId: "t", response: http, request: URLRequest(url: url))
        #expect(raw.request.url == "https://intranet.example.com:8443/private?x=1")
        let body = try String(decoding: JSONEncoder().encode(raw), as: UTF8.self)
        for text in [body, "\(raw)", String(reflecting: raw)] {
            #expect(!text.contains("url-pass-word"), "\(text)")
        }
    }

    @Test("codes and statuses a later service adds decode as themselves")
    func openValues() throws {
        var json = FakeCountersign.responseAnswerJSON()
        json = json.replacingOccurrences(of: #""reasonCode": "authorization""#, with: #""reasonCode": "quantum_handshake""#)
        json = json.replacingOccurrences(of: #""status": "chosen""#, with: #""status": "deferred""#)
        json = json.replacingOccurrences(of: #""name": "Authorization""#, with: #""name": "X-Authorization""#)
        let answer = try JSONCoding.decoder().decode(ResponseAnswer.self, from: Data(json.utf8))
        #expect(answer.reasonCode.rawValue == "quantum_handshake")
        #expect(answer.challenges.first?.status.rawValue == "deferred")
        #expect(answer.chosenChallenge == nil)
        #expect(answer.authorization?.name.rawValue == "X-Authorization")
    }
}
