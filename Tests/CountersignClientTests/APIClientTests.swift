@testable import CountersignClient
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The typed client: errors, retries where safe, decoding, redaction.
@Suite("The API client", .urlSessionSlot)
struct APIClientTests {
    static func client(_ fake: FakeCountersign, requestTimeout: Duration = .seconds(5), attempts: Int = 3) -> CountersignClient {
        CountersignClient(
            configuration: .init(
                baseURL: fake.baseURL,
                key: ClientKey("csk_abcdefghjkmn_0123456789-very-secret"),
                requestTimeout: requestTimeout,
                retry: RetryPolicy(maxAttempts: attempts, initialBackoff: .milliseconds(5))
            )
        )
    }

    static let challenge = Challenge(taskId: "t-1", protectionSpace: ProtectionSpace(host: "intranet.example.com", port: 443, protocolName: "https", authenticationMethod: .httpBasic))

    @Test("a service error carries the status, code and message")
    func serviceError() async throws {
        _ = try await FakeCountersign.run(.init(challenge: { _ in .error(403, "insufficient_role") })) { fake in
            await #expect(throws: CountersignClientError.service(status: 403, code: "insufficient_role", message: "scripted insufficient_role")) {
                try await Self.client(fake).decideChallenge(Self.challenge, in: UUID())
            }
        }
    }

    @Test("an error that is not Countersign's body is http_<status>")
    func foreignError() async throws {
        try await FakeCountersign.run(.init(getSession: { _ in .json(418, "<html>teapot</html>") })) { fake in
            do throws(CountersignClientError) {
                _ = try await Self.client(fake).getSession(UUID())
                Issue.record("no error")
            } catch {
                #expect(error.serviceCode == "http_418")
                #expect(error.status == 418)
            }
        }
    }

    @Test("a success body that is not the contract's JSON is a decoding error that never quotes it")
    func decodingError() async throws {
        try await FakeCountersign.run(.init(challenge: { _ in .json(200, #"{"password": "hunter2", "disposition": 7}"#) })) { fake in
            do throws(CountersignClientError) {
                _ = try await Self.client(fake).decideChallenge(Self.challenge, in: UUID())
                Issue.record("no error")
            } catch {
                guard case .decoding(let operation, _) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(operation == "decideChallenge")
                #expect(!"\(error)".contains("hunter2"))
                #expect(!String(reflecting: error).contains("hunter2"))
            }
        }
    }

    /// Which calls are tried again after which failures.
    struct RetryCase: Sendable, CustomStringConvertible {
        var description: String
        var script: FakeCountersign.Script
        var call: @Sendable (CountersignClient) async throws -> Void
        var route: String
        var requests: Int
        var requestTimeout: Duration = .seconds(5)
    }

    static let retryCases: [RetryCase] = [
        RetryCase(
            description: "getSession after 502: idempotent, retried",
            script: .init(getSession: { _ in .json(502, "bad gateway") }),
            call: { _ = try await $0.getSession(UUID()) }, route: "getSession", requests: 3
        ),
        RetryCase(
            description: "getSession after 500: final",
            script: .init(getSession: { _ in .error(500, "internal_error") }),
            call: { _ = try await $0.getSession(UUID()) }, route: "getSession", requests: 1
        ),
        RetryCase(
            description: "openSession after 502: might have opened one, not retried",
            script: .init(openSession: { _ in .json(502, "bad gateway") }),
            call: { _ = try await $0.openSession(OpenSessionRequest(clientId: "d")) }, route: "openSession", requests: 1
        ),
        RetryCase(
            description: "openSession after 503: nothing written, retried",
            script: .init(openSession: { _ in .error(503, "service_busy") }),
            call: { _ = try await $0.openSession(OpenSessionRequest(clientId: "d")) }, route: "openSession", requests: 3
        ),
        RetryCase(
            description: "openSession after 503 then 201: succeeds on the second try",
            script: .init(openSession: { call in call == 1 ? .error(503, "service_busy") : .json(201, FakeCountersign.sessionJSON()) }),
            call: { _ = try await $0.openSession(OpenSessionRequest(clientId: "d")) }, route: "openSession", requests: 2
        ),
        RetryCase(
            description: "decideChallenge after a proxy's 503 page: Countersign may have decided behind it, not retried",
            script: .init(challenge: { _ in .json(503, "upstream connect error or disconnect/reset before headers") }),
            call: { _ = try await $0.decideChallenge(APIClientTests.challenge, in: UUID()) }, route: "challenge", requests: 1
        ),
        RetryCase(
            description: "openSession after a proxy's 503 page: might have opened one, not retried",
            script: .init(openSession: { _ in .json(503, "<html>Service Unavailable</html>") }),
            call: { _ = try await $0.openSession(OpenSessionRequest(clientId: "d")) }, route: "openSession", requests: 1
        ),
        RetryCase(
            description: "getSession after a proxy's 503 page: idempotent, retried",
            script: .init(getSession: { _ in .json(503, "<html>Service Unavailable</html>") }),
            call: { _ = try await $0.getSession(UUID()) }, route: "getSession", requests: 3
        ),
        RetryCase(
            description: "decideChallenge after a timeout: may have been decided, never resent",
            script: .init(challenge: { _ in .json(200, FakeCountersign.answerJSON(disposition: "performDefaultHandling"), delay: .seconds(5)) }),
            call: { _ = try await $0.decideChallenge(APIClientTests.challenge, in: UUID()) }, route: "challenge", requests: 1,
            requestTimeout: .seconds(2)
        ),
        RetryCase(
            description: "answerRawResponse after a timeout: may have been decided and counted, never resent",
            script: .init(response: { _ in .json(200, FakeCountersign.responseAnswerJSON(), delay: .seconds(5)) }),
            call: { _ = try await $0.answerRawResponse(RawResponseClientTests.basic401, in: UUID()) }, route: "response", requests: 1,
            requestTimeout: .seconds(2)
        ),
        RetryCase(
            description: "answerRawResponse after 502: might have been decided, not retried",
            script: .init(response: { _ in .json(502, "bad gateway") }),
            call: { _ = try await $0.answerRawResponse(RawResponseClientTests.basic401, in: UUID()) }, route: "response", requests: 1
        ),
        RetryCase(
            description: "answerRawResponse after 503 then 200: nothing recorded, succeeds on the second try",
            script: .init(response: { call in call == 1 ? .error(503, "database_unavailable") : .json(200, FakeCountersign.responseAnswerJSON()) }),
            call: { _ = try await $0.answerRawResponse(RawResponseClientTests.basic401, in: UUID()) }, route: "response", requests: 2
        ),
        RetryCase(
            description: "reportOutcome after a timeout: idempotent, retried",
            script: .init(outcome: { _ in .json(200, FakeCountersign.outcomeJSON(), delay: .seconds(5)) }),
            call: { _ = try await $0.reportOutcome(OutcomeReport(outcome: .accepted, upstreamStatus: 200), for: UUID()) }, route: "outcome", requests: 3,
            requestTimeout: .seconds(2)
        ),
        RetryCase(
            description: "reportOutcome after 409: final",
            script: .init(outcome: { _ in .error(409, "outcome_conflict") }),
            call: { _ = try await $0.reportOutcome(OutcomeReport(outcome: .rejected), for: UUID()) }, route: "outcome", requests: 1
        ),
        RetryCase(
            description: "invalidateSession after 504: idempotent, retried",
            script: .init(invalidate: { _ in .json(504, "gateway timeout") }),
            call: { _ = try await $0.invalidateSession(UUID(), mode: .cancel) }, route: "invalidate", requests: 3
        ),
    ]

    @Test("retries only where a repeat is safe", arguments: retryCases)
    func retries(_ retryCase: RetryCase) async throws {
        try await FakeCountersign.run(retryCase.script) { fake in
            _ = try? await retryCase.call(Self.client(fake, requestTimeout: retryCase.requestTimeout))
            // A request the client gave up on may reach the fake's handler after the client
            // returned, on a busy machine: wait for the ones expected, then for any resend.
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while fake.recorder.count(retryCase.route) < retryCase.requests, clock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(fake.recorder.count(retryCase.route) == retryCase.requests)
        }
    }

    @Test("backoff doubles from the initial wait and never exceeds maxBackoff, jitter included")
    func backoffBounds() {
        let policy = RetryPolicy(maxAttempts: 10, initialBackoff: .milliseconds(100), maxBackoff: .seconds(1))
        let first = (0..<200).map { _ in policy.backoff(after: 1) }
        #expect(first.allSatisfy { $0 >= .milliseconds(80) && $0 <= .milliseconds(120) })
        // Capped from the fifth try on (1.6 s before the cap); the jitter must not lift it over.
        let capped = (0..<200).flatMap { _ in (4...40).map { policy.backoff(after: $0) } }
        #expect(capped.max()! <= .seconds(1))
    }

    @Test("Retry-After: the next try waits as long as asked, and none is made when that is longer than maxBackoff")
    func retryAfter() async throws {
        let busy: @Sendable (String) -> FakeCountersign.Answer = { after in
            var answer = FakeCountersign.Answer.error(503, "service_busy")
            answer.headers = ["Retry-After": after]
            return answer
        }
        try await FakeCountersign.run(.init(getSession: { call in call == 1 ? busy("1") : .json(200, FakeCountersign.sessionJSON()) })) { fake in
            let started = ContinuousClock.now
            _ = try await Self.client(fake).getSession(UUID())
            #expect(ContinuousClock.now - started >= .seconds(1))
            #expect(fake.recorder.count("getSession") == 2)
        }
        // Longer than the policy's maxBackoff (2 s): fails at once with the 503.
        try await FakeCountersign.run(.init(openSession: { _ in busy("120") })) { fake in
            let started = ContinuousClock.now
            do throws(CountersignClientError) {
                _ = try await Self.client(fake).openSession(OpenSessionRequest(clientId: "d"))
                Issue.record("no error")
            } catch {
                #expect(error.serviceCode == "service_busy")
            }
            // Waiting out the Retry-After would take 120 s.
            #expect(ContinuousClock.now - started < .seconds(10))
            #expect(fake.recorder.count("openSession") == 1)
        }
        // An HTTP date is a wait until then; a past one, none; anything else is no Retry-After.
        let now = Date(timeIntervalSince1970: 1_445_412_450)  // Wed, 21 Oct 2015 07:27:30 GMT
        #expect(RetryPolicy.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == .seconds(30))
        #expect(RetryPolicy.retryAfter("Wed, 21 Oct 2015 07:27:00 GMT", now: now) == .zero)
        #expect(RetryPolicy.retryAfter(" 7 ", now: now) == .seconds(7))
        #expect(RetryPolicy.retryAfter("soon", now: now) == nil)
        #expect(RetryPolicy.retryAfter(nil, now: now) == nil)
        #expect(RetryPolicy.retryAfter("99999999999999999999999", now: now)! > .seconds(1_000_000))
    }

    @Test("nothing listening: a transport error, after the tries a refused connection allows")
    func connectionRefused() async throws {
        let client = CountersignClient(configuration: .init(baseURL: URL(string: "http://127.0.0.1:1")!, key: ClientKey("k"), retry: RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(5))))
        do throws(CountersignClientError) {
            _ = try await client.decideChallenge(Self.challenge, in: UUID())
            Issue.record("no error")
        } catch {
            guard case .transport(let transport) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(transport.code == .cannotConnectToHost)
        }
        #expect(RetryPolicy.mayRetry(URLError(.cannotConnectToHost), .unsafe))
        #expect(!RetryPolicy.mayRetry(URLError(.timedOut), .unsafe))
        #expect(!RetryPolicy.mayRetry(URLError(.networkConnectionLost), .unsafe))
        #expect(RetryPolicy.mayRetry(URLError(.networkConnectionLost), .idempotent))
        #expect(!RetryPolicy.mayRetry(URLError(.cancelled), .idempotent))
    }

    @Test("submitCredential sends the contract's members and never shows the password")
    func submitCredential() async throws {
        try await FakeCountersign.run { fake in
            // The fake answers this route 404; the real answers are checked in LiveAPITests.
            let submission = SubmitCredentialRequest(
                protectionSpace: ProtectionSpace(host: "files.example.com", port: 443, protocolName: "https", realm: "Files", authenticationMethod: .httpDigest),
                user: "alice",
                password: "typed-by-alice",
                persistence: .forSession
            )
            await #expect(throws: CountersignClientError.self) { try await Self.client(fake).submitCredential(submission, in: UUID()) }
            let body = try #require(fake.recorder.bodies("credentials").only)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            #expect(Set(json.keys) == ["protectionSpace", "user", "password", "persistence"])
            #expect(!"\(submission)".contains("typed-by-alice"))
            var dumped = ""
            dump(submission, to: &dumped)
            #expect(!dumped.contains("typed-by-alice"))
        }
    }

    @Test("a Basic challenge on the way to Countersign fails the call at once, saying so, instead of hanging")
    func basicChallengeOnTheWay() async throws {
        let proxyLogin = FakeCountersign.Answer(status: 401, body: "login first", headers: ["WWW-Authenticate": #"Basic realm="corporate gateway""#])
        try await FakeCountersign.run(.init(getSession: { _ in proxyLogin })) { fake in
            let started = ContinuousClock.now
            do throws(CountersignClientError) {
                _ = try await Self.client(fake, attempts: 1).getSession(UUID())
                Issue.record("no error")
            } catch {
                // Not "could not be reached": the service (or a proxy) answered, asking for a login.
                #expect(error.status == 401, "\(error)")
                #expect(error.serviceCode == "http_401", "\(error)")
                #expect("\(error)".contains("asked for HTTP authentication"), "\(error)")
            }
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(fake.recorder.count("getSession") == 1)
        }
    }

    /// Taken once: a cancellation of the app's own later, on the same URL, must not be told as
    /// a login asked for.
    @Test("a refused challenge's status is told for one failed call only")
    func refusedChallengeToldOnce() {
        let delegate = InternalSessionDelegate()
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "http://127.0.0.1:8443/private")!
        let task = session.dataTask(with: url)
        let probe = CompletionProbe()
        delegate.urlSession(session, task: task, didReceive: Challenges.basic(), completionHandler: probe.handler)
        #expect(probe.all.map(\.disposition) == [.cancelAuthenticationChallenge])
        #expect(delegate.takeRefusedChallengeStatus(for: URL(string: "http://127.0.0.1:8443/elsewhere")) == nil)
        #expect(delegate.takeRefusedChallengeStatus(for: url) == 401)
        #expect(delegate.takeRefusedChallengeStatus(for: url) == nil)
    }

    @Test("a redirect is not followed: the key never goes to where it points", arguments: [301, 302, 307, 308])
    func redirectNotFollowed(_ status: Int) async throws {
        try await FakeCountersign.run { elsewhere in
            let moved = FakeCountersign.Answer(
                status: status,
                body: "",
                headers: ["Location": "\(elsewhere.baseURL.absoluteString)/v1/sessions/\(UUID().uuidString.lowercased())"]
            )
            try await FakeCountersign.run(.init(getSession: { _ in moved })) { fake in
                do throws(CountersignClientError) {
                    _ = try await Self.client(fake).getSession(UUID())
                    Issue.record("no error")
                } catch {
                    #expect(error.status == status)
                    #expect(error.serviceCode == "http_\(status)")
                }
                #expect(elsewhere.recorder.all.allSatisfy { $0.authorization == nil })
                #expect(elsewhere.recorder.all.isEmpty)
            }
        }
    }

    @Test("the key never shows: description, debug description, dump, the client, the configuration")
    func keyRedacted() {
        let key = ClientKey("csk_k3m9q2x7w4ab_3q2-7wEjW8kCk0nJ4eXgW5rVvQ9dTt6yZbH1aLmN0pU")
        let secret = "3q2-7wEjW8kCk0nJ4eXgW5rVvQ9dTt6yZbH1aLmN0pU"
        let client = CountersignClient(baseURL: URL(string: "https://countersign.example.com")!, key: key)
        var dumped = ""
        dump(key, to: &dumped)
        dump(client.configuration, to: &dumped)
        for text in ["\(key)", String(reflecting: key), "\(client)", "\(client.configuration)", String(reflecting: client.configuration), dumped] {
            #expect(!text.contains(secret), "\(text)")
        }
        #expect("\(key)".contains("csk_k3m9q2x7w4ab"))
        #expect(key.prefix == "csk_k3m9q2x7w4ab")
        #expect(ClientKey("not-a-countersign-key").prefix == nil)
    }

    @Test("a released credential never shows its secret")
    func credentialRedacted() throws {
        let answer = DecisionAnswer(
            decisionId: UUID(),
            disposition: .useCredential,
            credential: .password(user: "svc", password: "s3cret-from-the-vault"),
            source: .policy,
            reason: "released"
        )
        var dumped = ""
        dump(answer, to: &dumped)
        for text in ["\(answer)", String(reflecting: answer), "\(answer.credential!)", dumped] {
            #expect(!text.contains("s3cret-from-the-vault"), "\(text)")
        }
        let identity = ReleasedCredential(kind: .clientIdentity, pkcs12: Data([1, 2, 3]), passphrase: "one-time-pass")
        var dumpedIdentity = ""
        dump(identity, to: &dumpedIdentity)
        #expect(!dumpedIdentity.contains("one-time-pass"))
        #expect(!"\(identity)".contains("one-time-pass"))
    }

    @Test("values a later service adds decode as themselves")
    func openEnums() throws {
        let answer = try JSONCoding.decoder().decode(
            DecisionAnswer.self,
            from: Data(
                """
                {"decisionId": "9a4c2f0e-58a7-4d8e-a3f4-0c2b7d6e1f00", "disposition": "useCredential",
                 "credential": {"kind": "hardwareToken", "serial": "42"}, "persistence": "none", "scope": "connection",
                 "remainingAttempts": null, "blockedUntil": "2026-11-23T10:05:00Z", "rule": null, "source": "trustEvaluation",
                 "reason": "r", "countedRejection": null, "newField": {"anything": true}}
                """.utf8
            )
        )
        #expect(answer.scope.rawValue == "connection")
        #expect(answer.source.rawValue == "trustEvaluation")
        #expect(answer.credential?.kind.rawValue == "hardwareToken")
        #expect(answer.blockedUntil == Date(timeIntervalSince1970: 1_795_428_300))
        let session = try JSONCoding.decoder().decode(CountersignSession.self, from: Data(FakeCountersign.sessionJSON(state: "suspended").utf8))
        #expect(session.state.rawValue == "suspended")
        #expect(session.createdAt == Date(timeIntervalSince1970: 1_795_428_000))
        let method = try JSONDecoder().decode(AuthenticationMethod.self, from: Data(#""NSURLAuthenticationMethodOAuth2""#.utf8))
        #expect(method.rawValue == "NSURLAuthenticationMethodOAuth2")
    }

    @Test("the base URL must be http(s) with a host; a path prefix is kept")
    func baseURL() async throws {
        let client = CountersignClient(baseURL: URL(string: "file:///tmp/countersign")!, key: ClientKey("k"))
        await #expect(throws: CountersignClientError.self) { try await client.getSession(UUID()) }
        try await FakeCountersign.run { fake in
            let prefixed = CountersignClient(baseURL: fake.baseURL.appendingPathComponent("prefix"), key: ClientKey("k"))
            _ = try? await prefixed.getSession(UUID())
            #expect(fake.recorder.all.first?.path.hasPrefix("/prefix/v1/sessions/") == true)
        }
    }
}
