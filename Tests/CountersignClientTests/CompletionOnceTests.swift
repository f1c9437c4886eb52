@testable import CountersignClient
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The completion handler is called exactly once, whatever Countersign does.
@Suite("The completion handler is called exactly once on every path", .urlSessionSlot)
struct CompletionOnceTests {
    /// A way for Countersign to fail, and how the delegate must see it.
    struct FailurePath: Sendable, CustomStringConvertible {
        var description: String
        var script: FakeCountersign.Script
        var timeout: Duration = .seconds(10)
        var expect: @Sendable (FallbackReason) -> Bool
        /// Challenge requests the fake must have seen (nil: not checked).
        var challengeRequests: Int?
        /// An outcome `cancelled` reported for an unusable released credential.
        var settlesDecision = false
    }

    static let paths: [FailurePath] = [
        FailurePath(
            description: "500 on the challenge, not retried",
            script: .init(challenge: { _ in .error(500, "internal_error") }),
            expect: { $0 == .serviceFailed(.service(status: 500, code: "internal_error", message: "scripted internal_error")) },
            challengeRequests: 1
        ),
        FailurePath(
            description: "503 on the challenge, retried while nothing was written",
            script: .init(challenge: { _ in .error(503, "database_unavailable") }),
            expect: { $0 == .serviceFailed(.service(status: 503, code: "database_unavailable", message: "scripted database_unavailable")) },
            challengeRequests: 3
        ),
        FailurePath(
            description: "a proxy's 502 page, not retried for a challenge",
            script: .init(challenge: { _ in .json(502, "<html>bad gateway</html>") }),
            expect: { $0.clientError?.serviceCode == "http_502" },
            challengeRequests: 1
        ),
        FailurePath(
            description: "500 when opening the session",
            script: .init(openSession: { _ in .error(500, "internal_error") }),
            expect: { $0.clientError?.status == 500 },
            challengeRequests: 0
        ),
        FailurePath(
            description: "malformed JSON with 200",
            script: .init(challenge: { _ in .json(200, #"{"decisionId": "#) }),
            expect: { if case .serviceFailed(.decoding(operation: "decideChallenge", _)) = $0 { true } else { false } },
            challengeRequests: 1
        ),
        FailurePath(
            description: "an answer with a disposition this client does not know",
            script: .init(challenge: { _ in .json(200, FakeCountersign.answerJSON(disposition: "askTheUser")) }),
            expect: { if case .serviceFailed(.decoding) = $0 { true } else { false } }
        ),
        FailurePath(
            description: "the key refused",
            script: .init(openSession: { _ in .error(401, "invalid_api_key") }),
            expect: { $0.clientError?.serviceCode == "invalid_api_key" }
        ),
        FailurePath(
            description: "no answer before the deadline",
            script: .init(challenge: { _ in .json(200, FakeCountersign.answerJSON(disposition: "performDefaultHandling"), delay: .seconds(2)) }),
            timeout: .milliseconds(300),
            expect: { $0 == .timedOut }
        ),
        FailurePath(
            description: "useCredential without a credential",
            script: .init(challenge: { _ in .json(200, FakeCountersign.answerJSON(disposition: "useCredential")) }),
            expect: { if case .unusableCredential = $0 { true } else { false } },
            settlesDecision: true
        ),
        FailurePath(
            description: "a credential kind this client does not know",
            script: .init(challenge: { _ in .json(200, FakeCountersign.answerJSON(disposition: "useCredential", credential: #"{"kind": "hardwareToken", "serial": "42"}"#)) }),
            expect: { $0 == .unusableCredential("the credential kind 'hardwareToken' is not known to this client") },
            settlesDecision: true
        ),
        FailurePath(
            description: "a client identity where it cannot be imported",
            script: .init(challenge: { _ in .json(200, FakeCountersign.answerJSON(disposition: "useCredential", credential: #"{"kind": "clientIdentity", "pkcs12": "AAEC", "passphrase": "one-time"}"#)) }),
            expect: { if case .unusableCredential = $0 { true } else { false } },
            settlesDecision: true
        ),
    ]

    @Test("Countersign fails", arguments: paths)
    func failurePath(_ path: FailurePath) async throws {
        try await FakeCountersign.run(path.script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL) { $0.challengeTimeout = path.timeout }
            let probe = await direct.answer(Challenges.basic())
            #expect(probe.all.count == 1)
            #expect(probe.all.first?.disposition == defaultHandlingWithoutCredential)
            #expect(probe.all.first?.user == nil)
            let fallback = try #require(direct.events.fallbacks.only)
            #expect(path.expect(fallback.reason), "\(fallback.reason)")
            #expect(direct.events.decisions.isEmpty)
            if let expected = path.challengeRequests { #expect(fake.recorder.count("challenge") == expected) }
            if path.settlesDecision {
                #expect(fake.recorder.bodies("outcome") == [#"{"outcome":"cancelled"}"#])
                #expect(fallback.decisionId != nil)
            }
            // Long after every deadline: still one call.
            try await Task.sleep(for: .milliseconds(50))
            #expect(probe.all.count == 1)
        }
    }

    @Test("Countersign down: nothing listening")
    func serviceDown() async throws {
        let direct = DirectDelegate(baseURL: URL(string: "http://127.0.0.1:1")!)
        let probe = await direct.answer(Challenges.basic())
        #expect(probe.all.count == 1)
        #expect(probe.all.first?.disposition == defaultHandlingWithoutCredential)
        let fallback = try #require(direct.events.fallbacks.only)
        guard case .serviceFailed(.transport(let error)) = fallback.reason else {
            Issue.record("\(fallback.reason)")
            return
        }
        #expect(error.code == .cannotConnectToHost)
    }

    @Test("after the deadline answered, no call is started: no session opened late is asked for a decision")
    func nothingAskedAfterTheDeadline() async throws {
        let script = FakeCountersign.Script(openSession: { _ in .json(201, FakeCountersign.sessionJSON(), delay: .seconds(3)) })
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL) { $0.challengeTimeout = .milliseconds(100) }
            let probe = await direct.answer(Challenges.basic())
            #expect(probe.all.count == 1)
            #expect(direct.events.fallbacks.only?.reason == .timedOut)
            #expect(fake.recorder.count("openSession") == 1)
            #expect(fake.recorder.count("challenge") == 0)
        }
    }

    @Test("a late answer after the deadline is not applied, and its credential is settled")
    func lateAnswer() async throws {
        let credential = #"{"kind": "password", "user": "svc", "password": "late-secret", "domain": null}"#
        let script = FakeCountersign.Script(challenge: { _ in .json(200, FakeCountersign.answerJSON(disposition: "useCredential", credential: credential), delay: .seconds(3)) })
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL) { $0.challengeTimeout = .milliseconds(100) }
            // Opened first, so that the challenge is under way when the deadline answers.
            _ = await direct.delegate.keeper.session()
            let probe = await direct.answer(Challenges.basic())
            #expect(fake.recorder.count("challenge") == 1)
            #expect(probe.all.count == 1)
            #expect(probe.all.first?.password == nil)
            #expect(direct.events.fallbacks.only?.reason == .timedOut)
            #expect(fake.recorder.bodies("outcome") == [#"{"outcome":"cancelled"}"#])
        }
    }

    @Test("the configured fallback", arguments: [
        (CountersignSessionDelegate.Fallback.cancelAuthenticationChallenge, URLSession.AuthChallengeDisposition.cancelAuthenticationChallenge),
        (.rejectProtectionSpace, .rejectProtectionSpace),
    ])
    func configuredFallback(_ fallback: CountersignSessionDelegate.Fallback, _ expected: URLSession.AuthChallengeDisposition) async throws {
        let direct = DirectDelegate(baseURL: URL(string: "http://127.0.0.1:1")!, retry: .never) { $0.fallback = fallback }
        let probe = await direct.answer(Challenges.basic())
        #expect(probe.all.map(\.disposition) == [expected])
    }

    @Test("performDefaultHandling stays itself when URLSession proposed a credential")
    func defaultHandlingWithProposal() async throws {
        let direct = DirectDelegate(baseURL: URL(string: "http://127.0.0.1:1")!, retry: .never)
        let proposed = URLCredential(user: "stored", password: "kept-by-the-os", persistence: .forSession)
        let probe = await direct.answer(Challenges.basic(proposed: proposed))
        #expect(probe.all.map(\.disposition) == [.performDefaultHandling])
    }

    /// URLSession may end the task on another thread as soon as the handler returns, so the
    /// event of the answer must already be out: an app must never see a task's end first.
    @Test("the answer's event is out before URLSession hears the answer")
    func eventBeforeAnswer() async throws {
        let script = FakeCountersign.Script(challenge: { _ in .json(200, FakeCountersign.answerJSON(disposition: "cancelAuthenticationChallenge")) })
        try await FakeCountersign.run(script) { fake in
            for baseURL in [fake.baseURL, URL(string: "http://127.0.0.1:1")!] {
                let direct = DirectDelegate(baseURL: baseURL, retry: .never)
                let eventsWhenAnswered = Mutex<Int?>(nil)
                direct.delegate.urlSession(direct.session, task: direct.task(), didReceive: Challenges.basic()) { _, _ in
                    let told = direct.events.decisions.count + direct.events.fallbacks.count
                    eventsWhenAnswered.withLock { $0 = told }
                }
                await direct.delegate.waitUntilIdle()
                #expect(eventsWhenAnswered.withLock { $0 } == 1, "\(baseURL)")
            }
        }
    }

    @Test("twenty challenges at once: one session opened, each handler called once")
    func concurrentChallenges() async throws {
        let script = FakeCountersign.Script(openSession: { _ in .json(201, FakeCountersign.sessionJSON(), delay: .milliseconds(200)) })
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let probes = (0..<20).map { _ in CompletionProbe() }
            for probe in probes {
                direct.delegate.urlSession(direct.session, task: direct.task(), didReceive: Challenges.basic(), completionHandler: probe.handler)
            }
            for probe in probes { _ = await probe.firstCall() }
            await direct.delegate.waitUntilIdle()
            #expect(probes.allSatisfy { $0.all.count == 1 })
            #expect(fake.recorder.count("openSession") == 1)
            #expect(fake.recorder.count("challenge") == 20)
            #expect(direct.events.sessionsOpened.count == 1)
        }
    }

    @Test("a failed opening is not remembered: the next challenge opens the session")
    func openingRetriedLater() async throws {
        let script = FakeCountersign.Script(openSession: { call in call == 1 ? .error(500, "internal_error") : .json(201, FakeCountersign.sessionJSON()) })
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let first = await direct.answer(Challenges.basic())
            #expect(direct.events.fallbacks.count == 1)
            let second = await direct.answer(Challenges.basic())
            #expect(first.all.count == 1 && second.all.count == 1)
            #expect(direct.events.decisions.count == 1)
            #expect(fake.recorder.count("openSession") == 2)
        }
    }

    @Test("a session that ended under the delegate is replaced once, and the challenge asked again")
    func expiredSession() async throws {
        let script = FakeCountersign.Script(challenge: { call in
            call == 1 ? .error(409, "session_invalidated") : .json(200, FakeCountersign.answerJSON(disposition: "cancelAuthenticationChallenge"))
        })
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let probe = await direct.answer(Challenges.basic())
            #expect(probe.all.map(\.disposition) == [.cancelAuthenticationChallenge])
            #expect(fake.recorder.count("openSession") == 2)
            #expect(fake.recorder.count("challenge") == 2)
        }
    }

    @Test("a session the app invalidated on purpose is not replaced: the fallback answers, now and later")
    func explicitlyInvalidatedSession() async throws {
        let script = FakeCountersign.Script(
            challenge: { _ in .error(409, "session_invalidated") },
            getSession: { _ in .json(200, FakeCountersign.sessionJSON(state: "invalidated")) }
        )
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let first = await direct.answer(Challenges.basic())
            let second = await direct.answer(Challenges.basic())
            #expect(first.all.count == 1 && second.all.count == 1)
            #expect(direct.events.fallbacks.map(\.reason) == [.invalidated, .invalidated])
            #expect(fake.recorder.count("openSession") == 1)
            #expect(fake.recorder.count("challenge") == 1)
        }
        // One that expired is replaced, as before.
        let expired = FakeCountersign.sessionJSON(state: "invalidated").replacingOccurrences(of: #""explicit""#, with: #""expired""#)
        let lapsed = FakeCountersign.Script(
            challenge: { call in
                call == 1 ? .error(409, "session_invalidated") : .json(200, FakeCountersign.answerJSON(disposition: "cancelAuthenticationChallenge"))
            },
            getSession: { _ in .json(200, expired) }
        )
        try await FakeCountersign.run(lapsed) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let probe = await direct.answer(Challenges.basic())
            #expect(probe.all.map(\.disposition) == [.cancelAuthenticationChallenge])
            #expect(fake.recorder.count("openSession") == 2)
        }
    }

    @Test("a session that keeps ending falls back after one replacement")
    func sessionKeepsEnding() async throws {
        try await FakeCountersign.run(.init(challenge: { _ in .error(409, "session_invalidated") })) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let probe = await direct.answer(Challenges.basic())
            #expect(probe.all.count == 1)
            #expect(direct.events.fallbacks.only?.reason.clientError?.serviceCode == "session_invalidated")
            #expect(fake.recorder.count("challenge") == 2)
        }
    }

    @Test("too many attempts at one place: cancelled without asking")
    func tooManyAttempts() async throws {
        try await FakeCountersign.run { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL) { $0.maxAttemptsPerTask = 4 }
            let probe = await direct.answer(Challenges.basic(previousFailureCount: 4))
            #expect(probe.all.map(\.disposition) == [.cancelAuthenticationChallenge])
            #expect(direct.events.fallbacks.only?.reason == .tooManyAttempts(4))
            #expect(fake.recorder.count("challenge") == 0)
        }
    }

    @Test("too many attempts at a session-wide challenge (NTLM on Apple platforms): cancelled without asking")
    func tooManySessionWideAttempts() async throws {
        try await FakeCountersign.run { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL) { $0.maxAttemptsPerTask = 4 }
            let space = URLProtectionSpace(host: "intranet.example.com", port: 443, protocol: "https", realm: nil, authenticationMethod: NSURLAuthenticationMethodNTLM)
            let challenge = URLAuthenticationChallenge(
                protectionSpace: space,
                proposedCredential: nil,
                previousFailureCount: 4,
                failureResponse: nil,
                error: nil,
                sender: Challenges.Sender()
            )
            let probe = CompletionProbe()
            direct.delegate.urlSession(direct.session, didReceive: challenge, completionHandler: probe.handler)
            _ = await probe.firstCall()
            await direct.delegate.waitUntilIdle()
            #expect(probe.all.map(\.disposition) == [.cancelAuthenticationChallenge])
            #expect(direct.events.fallbacks.only?.reason == .tooManyAttempts(4))
            #expect(fake.recorder.count("challenge") == 0)
        }
    }

    @Test("after the URLSession is invalidated: fallback, nothing asked")
    func afterInvalidation() async throws {
        try await FakeCountersign.run { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            _ = await direct.answer(Challenges.basic())
            direct.delegate.urlSession(direct.session, didBecomeInvalidWithError: nil)
            await direct.delegate.waitUntilIdle()
            let probe = await direct.answer(Challenges.basic())
            #expect(probe.all.count == 1)
            #expect(direct.events.fallbacks.only?.reason == .invalidated)
            #expect(fake.recorder.count("challenge") == 1)
            #expect(fake.recorder.count("openSession") == 1)
        }
    }

    @Test("an ignored method is answered at once")
    func ignoredMethod() async throws {
        let direct = DirectDelegate(baseURL: URL(string: "http://127.0.0.1:1")!) { $0.ignoredMethods = [.serverTrust] }
        let probe = CompletionProbe()
        direct.delegate.urlSession(direct.session, didReceive: Challenges.method(AuthenticationMethod.serverTrust.rawValue), completionHandler: probe.handler)
        // Synchronously, on the delegate's own thread.
        #expect(probe.all.map(\.disposition) == [defaultHandlingWithoutCredential])
        #expect(direct.events.fallbacks.only?.reason == .ignoredMethod)
    }

    @Test("a server-trust answer where there are no trust objects falls back")
    func serverTrustOnLinux() async throws {
        let script = FakeCountersign.Script(challenge: { _ in .json(200, FakeCountersign.answerJSON(disposition: "useCredential")) })
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let probe = CompletionProbe()
            direct.delegate.urlSession(direct.session, didReceive: Challenges.method(AuthenticationMethod.serverTrust.rawValue), completionHandler: probe.handler)
            _ = await probe.firstCall()
            await direct.delegate.waitUntilIdle()
            #expect(probe.all.count == 1)
            #if canImport(FoundationNetworking)
            #expect(probe.all.first?.disposition == .cancelAuthenticationChallenge)
            guard case .unusableCredential = direct.events.fallbacks.only?.reason else {
                Issue.record("\(direct.events.all)")
                return
            }
            #endif
            // A session-wide challenge is named `session`.
            #expect(fake.recorder.bodies("challenge").first?.contains(#""taskId":"session""#) == true)
        }
    }
}

extension FallbackReason {
    var clientError: CountersignClientError? {
        if case .serviceFailed(let error) = self { return error }
        return nil
    }
}
