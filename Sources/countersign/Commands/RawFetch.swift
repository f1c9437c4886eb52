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
        var status: Int?

        print("\(method) \(FetchCommand.shown(target))")
        rounds: for _ in 1...Self.maximumRounds {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                print("no answer within \(timeout)")
                break
            }
            request.timeoutInterval = max(1, Double(remaining.components.seconds))
            let response: HTTPURLResponse
            do {
                response = try await Self.send(request, on: upstream)
            } catch {
                print("no response: \(error.localizedDescription)")
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
                    previousDecisionId: refusedAfterHeader ? released?.decisionId : nil
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
            } catch {
                print("countersign: \(error)")
                break
            }
        }

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

    private func report(_ outcome: Outcome, status: Int, for answer: ResponseAnswer) async {
        do {
            let reported = try await client.reportOutcome(OutcomeReport(outcome: outcome, upstreamStatus: status), for: answer.decisionId)
            print("outcome \(answer.decisionId.uuidString.lowercased()) \(reported.decision.outcome?.rawValue ?? outcome.rawValue) (\(status))")
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

    /// Sends `request` and returns the HTTP response, a 401 included.
    static func send(_ request: URLRequest, on session: URLSession) async throws -> HTTPURLResponse {
        try await withCheckedThrowingContinuation { continuation in
            let started = Mutex<URLSessionTask?>(nil)
            let task = session.dataTask(with: request) { _, response, error in
                // A 401 whose challenge was cancelled (Linux) ends with an error; its response stays on the task.
                if let http = (response ?? started.withLock { $0?.response }) as? HTTPURLResponse {
                    continuation.resume(returning: http)
                } else {
                    continuation.resume(throwing: error ?? URLError(.badServerResponse))
                }
            }
            started.withLock { $0 = task }
            task.resume()
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
