import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization

/// A stand-in for Countersign that answers what a test scripts: errors, garbage, slowness. Counts
/// what it was asked. For the paths a real service does not take on demand.
struct FakeCountersign: Sendable {
    let port: Int
    let recorder: Recorder

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A scripted answer: status, body text, and a delay before it.
    struct Answer: Sendable {
        var status: Int
        var body: String
        var delay: Duration = .zero
        var headers: [String: String] = [:]

        static func json(_ status: Int, _ body: String, delay: Duration = .zero) -> Answer { Answer(status: status, body: body, delay: delay) }
        static func error(_ status: Int, _ code: String) -> Answer {
            Answer(status: status, body: #"{"error": {"code": "\#(code)", "message": "scripted \#(code)"}}"#)
        }
    }

    /// Answers per route: given the number of the call to that route (from 1), what to answer.
    struct Script: Sendable {
        var openSession: @Sendable (Int) -> Answer = { _ in .json(201, FakeCountersign.sessionJSON()) }
        var challenge: @Sendable (Int) -> Answer = { _ in .json(200, FakeCountersign.answerJSON(disposition: "performDefaultHandling")) }
        var outcome: @Sendable (Int) -> Answer = { _ in .json(200, FakeCountersign.outcomeJSON()) }
        var invalidate: @Sendable (Int) -> Answer = { _ in .json(200, FakeCountersign.sessionJSON(state: "invalidated")) }
        var getSession: @Sendable (Int) -> Answer = { _ in .json(200, FakeCountersign.sessionJSON()) }
        var securityCheckReport: @Sendable (Int) -> Answer = { _ in .error(404, "security_check_not_answered") }
        var response: @Sendable (Int) -> Answer = { _ in .json(200, FakeCountersign.responseAnswerJSON()) }
    }

    /// What reached the fake: method, path and body of every request.
    final class Recorder: Sendable {
        struct Request: Sendable {
            var method: String
            var path: String
            var query: String? = nil
            var body: String
            var authorization: String?
        }
        private let requests = Mutex<[Request]>([])

        func record(_ request: Request) -> Int {
            requests.withLock { requests in
                requests.append(request)
                return requests.filter { Self.route(of: $0) == Self.route(of: request) }.count
            }
        }

        var all: [Request] { requests.withLock { $0 } }

        func count(_ route: String) -> Int { all.filter { Self.route(of: $0) == route }.count }

        func bodies(_ route: String) -> [String] { all.filter { Self.route(of: $0) == route }.map(\.body) }

        /// `openSession`, `challenge`, `outcome`, `invalidate`, `getSession`, `credentials`,
        /// `securityCheckReport`, `response` or the path.
        static func route(of request: Request) -> String {
            let parts = request.path.split(separator: "/")
            switch (request.method, parts.count, parts.last) {
            case ("POST", 2, _): return "openSession"
            case ("GET", 3, _): return "getSession"
            case ("POST", 4, "challenges"): return "challenge"
            case ("POST", 4, "invalidate"): return "invalidate"
            case ("POST", 4, "credentials"): return "credentials"
            case ("POST", 4, "responses"): return "response"
            case ("POST", 4, "outcome"): return "outcome"
            case ("POST", 6, "failure"), ("POST", 6, "success"): return "securityCheckReport"
            default: return request.path
            }
        }
    }

    static func run<T: Sendable>(_ script: Script = Script(), _ body: @Sendable (FakeCountersign) async throws -> T) async throws -> T {
        let recorder = Recorder()
        let router = Router()
        router.on("**", method: .post) { request, context in try await answer(request, context, recorder, script) }
        router.on("**", method: .get) { request, context in try await answer(request, context, recorder, script) }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { client in
            guard let port = client.port else { throw CocoaError(.featureUnsupported) }
            return try await body(FakeCountersign(port: port, recorder: recorder))
        }
    }

    private static func answer(_ request: Request, _ context: some RequestContext, _ recorder: Recorder, _ script: Script) async throws -> Response {
        let body = try await request.body.collect(upTo: 1 << 20)
        let recorded = Recorder.Request(
            method: request.method.rawValue,
            path: request.uri.path,
            query: request.uri.query,
            body: String(buffer: body),
            authorization: request.headers[.authorization]
        )
        let number = recorder.record(recorded)
        let answer: Answer
        switch Recorder.route(of: recorded) {
        case "openSession": answer = script.openSession(number)
        case "challenge": answer = script.challenge(number)
        case "outcome": answer = script.outcome(number)
        case "invalidate": answer = script.invalidate(number)
        case "getSession": answer = script.getSession(number)
        case "securityCheckReport": answer = script.securityCheckReport(number)
        case "response": answer = script.response(number)
        default: answer = .error(404, "route_not_found")
        }
        if answer.delay > .zero { try await Task.sleep(for: answer.delay) }
        var headers: HTTPFields = [.contentType: "application/json"]
        for (name, value) in answer.headers {
            if let name = HTTPField.Name(name) { headers[name] = value }
        }
        return Response(status: .init(code: answer.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: answer.body)))
    }

    // MARK: - Contract-shaped bodies

    static let sessionID = UUID()

    static func sessionJSON(id: UUID = sessionID, state: String = "active") -> String {
        let invalidated = state == "invalidated"
        return """
            {"id": "\(id.uuidString.lowercased())", "tenantId": "5d1f2e3c-4b5a-4697-8877-665544332211", "clientId": "device-1",
             "label": null, "createdAt": "2026-11-23T10:00:00.000Z", "expiresAt": "2026-11-23T11:00:00.000Z",
             "invalidatedAt": \(invalidated ? #""2026-11-23T10:30:00.000Z""# : "null"), "invalidationReason": \(invalidated ? #""explicit""# : "null"),
             "invalidationMode": \(invalidated ? #""finishTasks""# : "null"), "state": "\(state)"}
            """
    }

    static func answerJSON(id: UUID = UUID(), disposition: String, credential: String = "null", persistence: String = "none", countedRejection: UUID? = nil) -> String {
        """
        {"decisionId": "\(id.uuidString.lowercased())", "disposition": "\(disposition)", "credential": \(credential),
         "persistence": "\(persistence)", "scope": "task", "remainingAttempts": null, "blockedUntil": null,
         "rule": {"id": "fake", "name": null}, "source": "policy", "reason": "scripted",
         "countedRejection": \(countedRejection.map { #""\#($0.uuidString.lowercased())""# } ?? "null")}
        """
    }

    /// A `ResponseAnswer` releasing a Basic header whose value is `authorization`.
    static func responseAnswerJSON(id: UUID = UUID(), authorization: String = "Basic c3ZjOnMzY3JldA==") -> String {
        """
        {"decisionId": "\(id.uuidString.lowercased())", "disposition": "useCredential", "reasonCode": "authorization",
         "authorization": {"name": "Authorization", "value": "\(authorization)"}, "credential": null,
         "persistence": "none", "scope": "task", "remainingAttempts": 3, "blockedUntil": null,
         "rule": {"id": "fake", "name": null}, "source": "policy", "reason": "scripted", "countedRejection": null,
         "protectionSpace": {"host": "intranet.example.com", "port": 443, "protocol": "https", "realm": "Intranet",
                             "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic", "isProxy": false},
         "challenges": [{"index": 0, "scheme": "Basic", "realm": "Intranet", "mechanism": "Basic", "stale": false,
                         "status": "chosen", "code": null, "reason": "scripted"}]}
        """
    }

    static func outcomeJSON(decision: UUID = UUID(), outcome: String = "accepted") -> String {
        """
        {"decision": {"id": "\(decision.uuidString.lowercased())", "sessionId": "\(sessionID.uuidString.lowercased())", "clientId": "device-1",
          "keyId": "0b8f6a55-2f0e-4f7e-9d7c-7b8f3f0c1a2d", "taskId": "1", "kind": "challenge",
          "protectionSpace": {"host": "127.0.0.1", "port": 80, "protocol": "http", "realm": "Fleet",
                              "authenticationMethod": "NSURLAuthenticationMethodHTTPBasic", "isProxy": false},
          "previousFailureCount": 0, "disposition": "useCredential", "persistence": "none", "scope": "task", "source": "policy",
          "reason": "scripted", "rule": null, "credentialId": null, "blockedUntil": null, "createdAt": "2026-11-23T10:00:00.000Z",
          "outcome": "\(outcome)", "outcomeStatus": 200, "outcomeAt": "2026-11-23T10:00:01.000Z", "outcomeSource": "report",
          "countedRejection": false},
         "counted": false}
        """
    }
}
