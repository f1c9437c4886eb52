import CountersignClient
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `countersign fetch --raw`: the CFHTTPAuthentication-style flow, without
/// CountersignSessionDelegate. The request goes out as it is; a 401 (or a 403 after a header
/// Countersign issued) is forwarded raw with `answerRawResponse`, and the request is sent again
/// with the `Authorization` header that comes back, until the server accepts it or Countersign
/// says to stop. Prints statuses and decisions, never a header value.
struct RawFetch {
    let client: CountersignClient
    let clientId: String
    let method: String
    let timeout: Duration

    /// More rounds than any rule's `maxFailures` needs; a guard against a server that never settles.
    static let maximumRounds = 10

    /// The final status of the upstream, or nil when it never answered.
    func run(_ target: URL) async -> Int? {
        let deadline = ContinuousClock.now + timeout
        let upstream = URLSession(configuration: Self.sessionConfiguration, delegate: ChallengesAsResponses(), delegateQueue: nil)
        defer { upstream.finishTasksAndInvalidate() }
        var request = URLRequest(url: target)
        request.httpMethod = method
        let taskId = "fetch-" + UUID().uuidString.prefix(8).lowercased()
        var session: CountersignSession?
        var released: ResponseAnswer?
        /// A header applied to the request and not sent yet.
        var unsent: ResponseAnswer?
        var status: Int?

        print("\(method) \(FetchCommand.shown(target))")
        rounds: for _ in 1...Self.maximumRounds {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                print("no answer within \(timeout)")
                break
            }
            request.timeoutInterval = max(1, Double(remaining.components.seconds))
            unsent = nil
            let response: HTTPURLResponse
            do {
                response = try await Self.send(request, on: upstream, until: deadline)
            } catch {
                // The request's own timeout is what is left of `--timeout`: its end is the same.
                let timedOut = ContinuousClock.now >= deadline || FetchCommand.isTimeout(error)
                print(timedOut ? "no answer within \(timeout)" : "no response: \(error.localizedDescription)")
                // The last request got no answer: an earlier round's status is not its end.
                status = nil
                // The header went out and got no verdict.
                if let released { await report(.cancelled, status: nil, for: released) }
                break
            }
            status = response.statusCode
            print("upstream: \(response.statusCode)")
            let refusedAfterHeader = response.statusCode == 403 && released != nil
            guard response.statusCode == 401 || refusedAfterHeader else {
                if let released {
                    await report(.notChallenged(status: response.statusCode), status: response.statusCode, for: released)
                }
                break
            }
            do {
                if session == nil {
                    let opened = try await client.openSession(OpenSessionRequest(clientId: clientId, label: "countersign fetch --raw"))
                    print("countersign session \(opened.id.uuidString.lowercased()) opened (client \(opened.clientId))")
                    session = opened
                }
                guard let sessionID = session?.id else { break }
                let raw = RawResponse(
                    taskId: taskId,
                    response: response,
                    request: request,
                    // Which header the request carried, if any: a forward repeated after a lost
                    // answer then judges that header, not a release this command never got.
                    previousDecisionId: released?.decisionId,
                    carriedHeader: released != nil
                )
                let answer = try await client.answerRawResponse(raw, in: sessionID)
                print(Self.line(answer))
                guard answer.disposition == .useCredential, let header = answer.authorization else {
                    if answer.reasonCode == .ntlmHandshake { print("NTLM is a connection handshake; fetch --raw does not run it") }
                    break rounds
                }
                print("sending \(header)")
                header.apply(to: &request)
                released = answer
                unsent = answer
            } catch {
                print("countersign: \(error)")
                break
            }
        }

        // Out of rounds or time with a header never sent: its release was never judged.
        if let unsent { await report(.cancelled, status: nil, for: unsent) }
        if let session {
            do {
                let ended = try await client.invalidateSession(session.id, mode: .finishTasks)
                print("countersign session \(ended.id.uuidString.lowercased()) invalidated (\(ended.invalidationMode?.rawValue ?? "?"))")
            } catch {
                print("countersign session not invalidated: \(error)")
            }
        }
        return status
    }

    private func report(_ outcome: Outcome, status: Int?, for answer: ResponseAnswer) async {
        do {
            let reported = try await client.reportOutcome(OutcomeReport(outcome: outcome, upstreamStatus: status), for: answer.decisionId)
            let shownStatus = status.map { " (\($0))" } ?? ""
            print("outcome \(answer.decisionId.uuidString.lowercased()) \(reported.decision.outcome?.rawValue ?? outcome.rawValue)\(shownStatus)")
        } catch {
            print("outcome \(answer.decisionId.uuidString.lowercased()) \(outcome) not reported: \(error)")
        }
    }

    /// One decision as a line: never the header's value.
    static func line(_ answer: ResponseAnswer) -> String {
        var parts = ["decision \(answer.decisionId.uuidString.lowercased())", answer.disposition.rawValue, answer.reasonCode.rawValue]
        if let mechanism = answer.chosenChallenge?.mechanism { parts.append(mechanism) }
        if let rule = answer.rule { parts.append("rule: \(rule)") }
        if let remaining = answer.remainingAttempts { parts.append("remaining attempts: \(remaining)") }
        if let rejected = answer.countedRejection { parts.append("counted the rejection of \(rejected.uuidString.lowercased())") }
        parts.append("[\(answer.source)] \(answer.reason)")
        return parts.joined(separator: "  ")
    }

    /// No cookies, cache or stored credentials: what goes out is exactly what this flow sets.
    static var sessionConfiguration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        return configuration
    }

    /// Sends `request` and returns the HTTP response, a 401 included, cancelling it at
    /// `deadline`: `timeoutInterval` only bounds the wait between two bytes, and a server that
    /// trickles its answer would hold the fetch past `--timeout`.
    static func send(_ request: URLRequest, on session: URLSession, until deadline: ContinuousClock.Instant) async throws -> HTTPURLResponse {
        let task = StartedTask()
        let watchdog = Task {
            try await Task.sleep(until: deadline)
            task.cancel()
        }
        defer { watchdog.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let dataTask = session.dataTask(with: request) { _, response, error in
                // A 401 whose challenge was cancelled (Linux) ends with an error; its response stays on the task.
                if let http = (response ?? task.current?.response) as? HTTPURLResponse {
                    continuation.resume(returning: http)
                } else {
                    continuation.resume(throwing: error ?? URLError(.badServerResponse))
                }
            }
            task.start(dataTask)
        }
    }

    /// The data task under way, for its completion handler and the deadline's watchdog. A deadline
    /// that passes before the task is started cancels it as it starts: it would otherwise run
    /// bounded only by `timeoutInterval`, which a trickling server never reaches.
    private final class StartedTask: Sendable {
        private let state = Mutex<(task: URLSessionTask?, cancelled: Bool)>((nil, false))

        var current: URLSessionTask? { state.withLock { $0.task } }

        func start(_ task: URLSessionTask) {
            let cancelled = state.withLock { state in
                state.task = task
                return state.cancelled
            }
            task.resume()
            if cancelled { task.cancel() }
        }

        func cancel() {
            state.withLock { state in
                state.cancelled = true
                return state.task
            }?.cancel()
        }
    }
}

/// Hands a 401 back as the response instead of answering its challenge: the raw flow answers it.
///
/// Apple's URLSession does that by itself with default handling and no stored credential.
/// swift-corelibs-foundation would leave the task hanging then (see the client's
/// `PlatformBehaviour`); cancelling the challenge ends the task with the 401 kept as its response.
private final class ChallengesAsResponses: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
        // FoundationNetworking raises only 401 challenges (no TLS ones).
        completionHandler(.cancelAuthenticationChallenge, nil)
        #else
        completionHandler(.performDefaultHandling, nil)
        #endif
    }
}
