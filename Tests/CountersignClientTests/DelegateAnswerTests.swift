@testable import CountersignClient
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the delegate turns answers into credentials, names retries, reports outcomes and
/// invalidates, against a scripted Countersign.
@Suite("The delegate's answers, reports and invalidation", .urlSessionSlot)
struct DelegateAnswerTests {
    static func password(user: String = "svc", password: String = "pa55", domain: String? = nil) -> String {
        #"{"kind": "password", "user": "\#(user)", "password": "\#(password)", "domain": \#(domain.map { #""\#($0)""# } ?? "null")}"#
    }

    @Test("a released password becomes the URLCredential, at the returned persistence", arguments: [
        ("none", URLCredential.Persistence.none),
        ("forSession", .forSession),
        ("permanent", .permanent),
    ])
    func passwordCredential(_ persistence: String, _ expected: URLCredential.Persistence) async throws {
        let script = FakeCountersign.Script(challenge: { _ in
            .json(200, FakeCountersign.answerJSON(disposition: "useCredential", credential: Self.password(), persistence: persistence))
        })
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL) { $0.persistenceLimit = nil }
            let probe = await direct.answer(Challenges.basic())
            let call = try #require(probe.all.only)
            #expect(call.disposition == .useCredential)
            #expect(call.user == "svc")
            #expect(call.password == "pa55")
            #expect(call.persistence == expected)
            let decision = try #require(direct.events.decisions.only)
            #expect(decision.user == "svc")
            // What apps may log: never the password.
            #expect(!String(describing: direct.events.all).contains("pa55"))
            #expect(!"\(decision)".contains("pa55"))
        }
    }

    @Test("synchronizable has no store on Linux: kept permanent there")
    func synchronizable() {
        #if canImport(FoundationNetworking)
        #expect(CredentialBuilder.urlPersistence(.synchronizable) == .permanent)
        #else
        #expect(CredentialBuilder.urlPersistence(.synchronizable) == .synchronizable)
        #endif
    }

    @Test("the persistence limit keeps credentials off the device's permanent store, by default")
    func persistenceLimit() async throws {
        let script = FakeCountersign.Script(challenge: { _ in
            .json(200, FakeCountersign.answerJSON(disposition: "useCredential", credential: Self.password(), persistence: "permanent"))
        })
        try await FakeCountersign.run(script) { fake in
            let byDefault = await DirectDelegate(baseURL: fake.baseURL).answer(Challenges.basic())
            #expect(byDefault.all.only?.persistence == .forSession)
            let keeping = DirectDelegate(baseURL: fake.baseURL) { $0.persistenceLimit = nil }
            #expect(await keeping.answer(Challenges.basic()).all.only?.persistence == .permanent)
        }
    }

    @Test("an NTLM account with a domain is DOMAIN\\user")
    func ntlmDomain() {
        #expect(CredentialBuilder.accountName("alice", domain: "CORP", method: .ntlm) == #"CORP\alice"#)
        #expect(CredentialBuilder.accountName("alice", domain: "CORP", method: .httpBasic) == "alice")
        #expect(CredentialBuilder.accountName("alice", domain: nil, method: .ntlm) == "alice")
    }

    @Test("what is forwarded: the space, the failure response without cookies, never a password")
    func forwardedChallenge() async throws {
        try await FakeCountersign.run { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let proposed = URLCredential(user: "stored-user", password: "never-forwarded", persistence: .forSession)
            let challenge = Challenges.basic(port: 9090, previousFailureCount: 2, proposed: proposed, headers: ["Set-Cookie": "session=secret-cookie", "X-Trace": "t1"])
            let task = direct.task()
            _ = await direct.answer(challenge, task: task)
            let body = try #require(fake.recorder.bodies("challenge").only)
            let sent = try JSONDecoder().decode(Challenge.self, from: Data(body.utf8))
            #expect(sent.taskId == String(task.taskIdentifier))
            #expect(sent.protectionSpace.host == "127.0.0.1")
            #expect(sent.protectionSpace.port == 9090)
            #expect(sent.protectionSpace.protocolName == "http")
            #expect(sent.protectionSpace.realm == "Fleet")
            #expect(sent.protectionSpace.authenticationMethod == .httpBasic)
            #expect(sent.protectionSpace.isProxy == false)
            #expect(sent.previousFailureCount == 2)
            #expect(sent.proposedCredential == ProposedCredential(user: "stored-user", hasPassword: true))
            #expect(sent.failureResponse?.status == 401)
            #expect(sent.failureResponse?.headers?["WWW-Authenticate"] == #"Basic realm="Fleet""#)
            #expect(sent.failureResponse?.headers?["X-Trace"] == "t1")
            #expect(sent.failureResponse?.headers?.keys.contains { $0.lowercased() == "set-cookie" } == false)
            #expect(!body.contains("never-forwarded"))
            #expect(!body.contains("secret-cookie"))
            // The bearer key went in the header, as the contract says.
            #expect(fake.recorder.all.allSatisfy { $0.authorization == "Bearer csk_abcdefghjkmn_test-secret" })
        }
    }

    @Test("a retry with no proposed credential names the user the task was given, so the service can count it")
    func retryNamesTheRejectedUser() async throws {
        let first = UUID()
        let script = FakeCountersign.Script(challenge: { call in
            call == 1
                ? .json(200, FakeCountersign.answerJSON(id: first, disposition: "useCredential", credential: Self.password(user: "svc-a")))
                : .json(200, FakeCountersign.answerJSON(disposition: "cancelAuthenticationChallenge", countedRejection: first))
        })
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let task = direct.task()
            _ = await direct.answer(Challenges.basic(), task: task)
            _ = await direct.answer(Challenges.basic(previousFailureCount: 1), task: task)
            let bodies = fake.recorder.bodies("challenge")
            #expect(bodies.count == 2)
            let retry = try JSONDecoder().decode(Challenge.self, from: Data(bodies[1].utf8))
            #expect(retry.proposedCredential == ProposedCredential(user: "svc-a", hasPassword: true))
            // Another task's retry in the same space names nobody: it was never given anything.
            _ = await direct.answer(Challenges.basic(previousFailureCount: 1), task: direct.task())
            let other = try JSONDecoder().decode(Challenge.self, from: Data(fake.recorder.bodies("challenge")[2].utf8))
            #expect(other.proposedCredential == nil)

            // The service counted the rejection itself: the task's end reports nothing more.
            direct.delegate.taskDidComplete(taskIdentifier: task.taskIdentifier, response: Self.response(401), error: URLError(.cancelled))
            await direct.delegate.waitUntilIdle()
            #expect(fake.recorder.count("outcome") == 0)
            #expect(direct.events.completedTasks.last?.outcomes.isEmpty == true)
        }
    }

    @Test("a rejection the service counted from a retry whose answer came too late is not reported again")
    func countedByALateAnswer() async throws {
        let first = UUID()
        let script = FakeCountersign.Script(challenge: { call in
            call == 1
                ? .json(200, FakeCountersign.answerJSON(id: first, disposition: "useCredential", credential: Self.password(user: "svc-a")))
                : .json(200, FakeCountersign.answerJSON(disposition: "cancelAuthenticationChallenge", countedRejection: first), delay: .seconds(12))
        })
        try await FakeCountersign.run(script) { fake in
            // Long enough for the first answer even while a whole run starts on two cores (2 s was
            // not, in CI); the retry's comes later, and its request outlasts the deadline.
            let direct = DirectDelegate(baseURL: fake.baseURL, requestTimeout: .seconds(15)) { $0.challengeTimeout = .seconds(8) }
            let task = direct.task()
            _ = await direct.answer(Challenges.basic(), task: task)
            let retry = await direct.answer(Challenges.basic(previousFailureCount: 1), task: task)
            #expect(direct.events.fallbacks.only?.reason == .timedOut)
            #expect(retry.all.count == 1)
            direct.delegate.taskDidComplete(taskIdentifier: task.taskIdentifier, response: Self.response(401), error: URLError(.cancelled))
            await direct.delegate.waitUntilIdle()
            #expect(fake.recorder.count("outcome") == 0)
            #expect(direct.events.completedTasks.only?.outcomes.isEmpty == true)
        }
    }

    @Test("a task cancelled while the challenge that refused its credential waits for Countersign still reports the rejection")
    func cancelledWhileTheRetryIsAsked() async throws {
        let first = UUID()
        let script = FakeCountersign.Script(challenge: { call in
            call == 1
                ? .json(200, FakeCountersign.answerJSON(id: first, disposition: "useCredential", credential: Self.password(user: "svc-a")))
                : .json(200, FakeCountersign.answerJSON(disposition: "cancelAuthenticationChallenge"), delay: .milliseconds(300))
        })
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let task = direct.task()
            _ = await direct.answer(Challenges.basic(), task: task)
            // URLSession calls both on its delegate queue, one after the other: the app cancels the
            // task while the refusing challenge is still with Countersign.
            let probe = CompletionProbe()
            direct.delegate.urlSession(direct.session, task: task, didReceive: Challenges.basic(previousFailureCount: 1), completionHandler: probe.handler)
            direct.delegate.taskDidComplete(taskIdentifier: task.taskIdentifier, response: Self.response(401), error: URLError(.cancelled))
            _ = await probe.firstCall()
            await direct.delegate.waitUntilIdle()
            #expect(fake.recorder.bodies("outcome") == [#"{"outcome":"rejected","upstreamStatus":401}"#])
            let retry = try JSONDecoder().decode(Challenge.self, from: Data(fake.recorder.bodies("challenge")[1].utf8))
            #expect(retry.proposedCredential == ProposedCredential(user: "svc-a", hasPassword: true))
        }
    }

    static func response(_ status: Int, url: String = "http://127.0.0.1:8443/private") -> HTTPURLResponse {
        HTTPURLResponse(url: URL(string: url)!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: [:])!
    }

    /// How a task's end turns into the outcome of the credential it was given.
    struct Ending: Sendable, CustomStringConvertible {
        var description: String
        var response: HTTPURLResponse?
        var error: URLError?
        var expected: String
    }

    static let endings: [Ending] = [
        Ending(description: "200", response: response(200), expected: #"{"outcome":"accepted","upstreamStatus":200}"#),
        Ending(description: "401 from the same server", response: response(401), expected: #"{"outcome":"rejected","upstreamStatus":401}"#),
        Ending(
            description: "failed with the 401 that asked for the credential: its request got no answer",
            response: response(401),
            error: URLError(.timedOut),
            expected: #"{"outcome":"cancelled"}"#
        ),
        // As the service records a 403 forwarded raw: some servers answer a wrong password so.
        Ending(description: "403 from the same server: refused, neither counted nor a reset", response: response(403), expected: #"{"outcome":"refused","upstreamStatus":403}"#),
        Ending(
            description: "403 from another server after a redirect",
            response: response(403, url: "http://elsewhere.example:8443/x"),
            expected: #"{"outcome":"accepted","upstreamStatus":403}"#
        ),
        Ending(
            description: "401 from another server after a redirect",
            response: response(401, url: "http://elsewhere.example:8443/x"),
            expected: #"{"outcome":"accepted","upstreamStatus":401}"#
        ),
        Ending(description: "no response", error: URLError(.networkConnectionLost), expected: #"{"outcome":"cancelled"}"#),
    ]

    @Test("the task's end reports the outcome of its credential", arguments: endings)
    func taskEnding(_ ending: Ending) async throws {
        let decision = UUID()
        let script = FakeCountersign.Script(challenge: { _ in
            .json(200, FakeCountersign.answerJSON(id: decision, disposition: "useCredential", credential: Self.password()))
        })
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let task = direct.task()
            _ = await direct.answer(Challenges.basic(), task: task)
            direct.delegate.taskDidComplete(taskIdentifier: task.taskIdentifier, response: ending.response, error: ending.error)
            // A second completion for the same task changes nothing.
            direct.delegate.taskDidComplete(taskIdentifier: task.taskIdentifier, response: ending.response, error: ending.error)
            await direct.delegate.waitUntilIdle()
            #expect(fake.recorder.bodies("outcome") == [ending.expected])
            #expect(fake.recorder.all.filter { FakeCountersign.Recorder.route(of: $0) == "outcome" }.map(\.path) == ["/v1/decisions/\(decision.uuidString.lowercased())/outcome"])
            #expect(direct.events.reported.map(\.0) == [decision])
        }
    }

    /// A space as Apple may name it, and the URL of the 401 its own server ended the task with.
    struct SpaceSpelling: Sendable, CustomStringConvertible {
        var description: String
        var host: String
        var port: Int
        var scheme: String
        var finalURL: String
    }

    static let spellings: [SpaceSpelling] = [
        SpaceSpelling(description: "Apple's port 0 over https", host: "intranet.example.com", port: 0, scheme: "https", finalURL: "https://intranet.example.com/private"),
        SpaceSpelling(description: "Apple's port 0 over http", host: "intranet.example.com", port: 0, scheme: "http", finalURL: "http://intranet.example.com/private"),
        SpaceSpelling(description: "an IPv6 host in brackets", host: "[2001:db8::1]", port: 8443, scheme: "http", finalURL: "http://[2001:db8::1]:8443/private"),
        SpaceSpelling(description: "an IPv6 host without brackets", host: "2001:db8::1", port: 8443, scheme: "http", finalURL: "http://[2001:db8::1]:8443/private"),
        SpaceSpelling(description: "an internationalized host, the URL in its ASCII form", host: "Bücher.example", port: 443, scheme: "https", finalURL: "https://xn--bcher-kva.example/private"),
    ]

    @Test("a 401 from the credential's own server rejects it, however the space spells host and port", arguments: spellings)
    func spaceSpelling(_ spelling: SpaceSpelling) async throws {
        let script = FakeCountersign.Script(challenge: { _ in
            .json(200, FakeCountersign.answerJSON(disposition: "useCredential", credential: Self.password()))
        })
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let space = URLProtectionSpace(
                host: spelling.host,
                port: spelling.port,
                protocol: spelling.scheme,
                realm: "Fleet",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic
            )
            let challenge = URLAuthenticationChallenge(
                protectionSpace: space,
                proposedCredential: nil,
                previousFailureCount: 0,
                failureResponse: Self.response(401, url: spelling.finalURL),
                error: nil,
                sender: Challenges.Sender()
            )
            let task = direct.task()
            _ = await direct.answer(challenge, task: task)
            direct.delegate.taskDidComplete(taskIdentifier: task.taskIdentifier, response: Self.response(401, url: spelling.finalURL), error: nil)
            await direct.delegate.waitUntilIdle()
            // Not `accepted`, which would reset the rejection count of a wrong password.
            #expect(fake.recorder.bodies("outcome") == [#"{"outcome":"rejected","upstreamStatus":401}"#])
        }
    }

    #if canImport(FoundationNetworking)
    @Test("Linux: a Digest 401 never reaches the delegate; the task ends with it (the raw-response flow answers Digest there)")
    func digestOnLinux() async throws {
        try await FakeCountersign.run { fake in
            try await AuthUpstream.run(.digest, user: "svc", password: "pa55") { upstream in
                let direct = DirectDelegate(baseURL: fake.baseURL)
                let session = makeSession(direct.delegate)
                let summary = try await direct.events.run(session, URL(string: "\(upstream.baseURL)/private")!)
                session.finishTasksAndInvalidate()
                await direct.delegate.waitUntilIdle()
                #expect(summary.status == 401)
                #expect(summary.decisions.isEmpty && summary.fallbacks.isEmpty)
                #expect(fake.recorder.all.isEmpty)
            }
        }
    }
    #endif

    @Test("an outcome report that fails is retried by the delegate's own policy, then told as an event")
    func outcomeRetried() async throws {
        let script = FakeCountersign.Script(
            challenge: { _ in .json(200, FakeCountersign.answerJSON(disposition: "useCredential", credential: Self.password())) },
            outcome: { _ in .json(502, "bad gateway") }
        )
        try await FakeCountersign.run(script) { fake in
            // The client tries its calls 3 times; outcome reports, 4.
            let direct = DirectDelegate(baseURL: fake.baseURL) { $0.outcomeRetry = RetryPolicy(maxAttempts: 4, initialBackoff: .milliseconds(10)) }
            let task = direct.task()
            _ = await direct.answer(Challenges.basic(), task: task)
            direct.delegate.taskDidComplete(taskIdentifier: task.taskIdentifier, response: Self.response(200), error: nil)
            await direct.delegate.waitUntilIdle()
            #expect(fake.recorder.count("outcome") == 4)
            #expect(direct.events.reportFailures.only?.1.status == 502)
        }
    }

    @Test("decisions that released nothing are not reported")
    func nothingReleased() async throws {
        try await FakeCountersign.run { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let task = direct.task()
            _ = await direct.answer(Challenges.basic(), task: task)
            direct.delegate.taskDidComplete(taskIdentifier: task.taskIdentifier, response: Self.response(401), error: URLError(.cancelled))
            await direct.delegate.waitUntilIdle()
            #expect(fake.recorder.count("outcome") == 0)
            #expect(direct.events.completedTasks.only?.decisions.count == 1)
        }
    }

    /// How the URLSession ended, and the mode its Countersign session must end in.
    struct Ending2: Sendable, CustomStringConvertible {
        var description: String
        var end: @Sendable (DirectDelegate) -> Void
        var mode: String
    }

    static let invalidations: [Ending2] = [
        Ending2(description: "nil error", end: { $0.delegate.urlSession($0.session, didBecomeInvalidWithError: nil) }, mode: "finishTasks"),
        Ending2(description: "an error", end: { $0.delegate.urlSession($0.session, didBecomeInvalidWithError: URLError(.unknown)) }, mode: "cancel"),
        Ending2(
            description: "finishTasksAndInvalidate through the delegate",
            end: { direct in
                let session = URLSession(configuration: .ephemeral, delegate: direct.delegate, delegateQueue: nil)
                direct.delegate.finishTasksAndInvalidate(session)
            },
            mode: "finishTasks"
        ),
        Ending2(
            description: "invalidateAndCancel through the delegate",
            end: { direct in
                let session = URLSession(configuration: .ephemeral, delegate: direct.delegate, delegateQueue: nil)
                direct.delegate.invalidateAndCancel(session)
            },
            mode: "cancel"
        ),
    ]

    @Test("the Countersign session ends with the URLSession, in the matching mode", arguments: invalidations)
    func invalidation(_ ending: Ending2) async throws {
        try await FakeCountersign.run { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            _ = await direct.answer(Challenges.basic())
            ending.end(direct)
            // URLSession calls the delegate on its own queue: wait for it to arrive.
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while fake.recorder.count("invalidate") == 0, clock.now < deadline {
                await direct.delegate.waitUntilIdle()
                try await Task.sleep(for: .milliseconds(10))
            }
            await direct.delegate.waitUntilIdle()
            #expect(fake.recorder.bodies("invalidate") == [#"{"mode":"\#(ending.mode)"}"#])
            #expect(fake.recorder.all.last.map { FakeCountersign.Recorder.route(of: $0) } == "invalidate")
            #expect(direct.events.invalidated.count == 1)
        }
    }

    @Test("a URLSession that never met a challenge leaves nothing to invalidate")
    func nothingToInvalidate() async throws {
        try await FakeCountersign.run { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            direct.delegate.urlSession(direct.session, didBecomeInvalidWithError: nil)
            await direct.delegate.waitUntilIdle()
            #expect(fake.recorder.all.isEmpty)
            #expect(await direct.delegate.countersignSession == nil)
        }
    }

    @Test("pending outcomes are reported before the session is cancelled")
    func reportsBeforeCancel() async throws {
        let script = FakeCountersign.Script(
            challenge: { _ in .json(200, FakeCountersign.answerJSON(disposition: "useCredential", credential: Self.password())) },
            outcome: { _ in .json(200, FakeCountersign.outcomeJSON(), delay: .milliseconds(300)) }
        )
        try await FakeCountersign.run(script) { fake in
            let direct = DirectDelegate(baseURL: fake.baseURL)
            let task = direct.task()
            _ = await direct.answer(Challenges.basic(), task: task)
            direct.delegate.taskDidComplete(taskIdentifier: task.taskIdentifier, response: Self.response(200), error: nil)
            direct.delegate.urlSession(direct.session, didBecomeInvalidWithError: URLError(.cancelled))
            await direct.delegate.waitUntilIdle()
            let routes = fake.recorder.all.map { FakeCountersign.Recorder.route(of: $0) }
            #expect(routes == ["openSession", "challenge", "outcome", "invalidate"])
        }
    }

    @Test("a response with more headers than are forwarded keeps its challenges")
    func challengesOutlastOtherHeaders() throws {
        var fields = ["WWW-Authenticate": #"Basic realm="r""#, "Proxy-Authenticate": "Negotiate"]
        for index in 0..<(ChallengeSnapshot.maxHeaders + 50) { fields[String(format: "A-Header-%03d", index)] = "x" }
        let response = try #require(HTTPURLResponse(url: URL(string: "https://files.example.com/")!, statusCode: 401, httpVersion: "HTTP/1.1", headerFields: fields))
        let forwarded = ChallengeSnapshot.forwardedHeaders(of: response)
        #expect(forwarded.count == ChallengeSnapshot.maxHeaders)
        #expect(forwarded.first { $0.key.lowercased() == "www-authenticate" }?.value == #"Basic realm="r""#)
        #expect(forwarded.first { $0.key.lowercased() == "proxy-authenticate" }?.value == "Negotiate")
    }
}
