@testable import CountersignClient
import Foundation
import Testing
import Yams

/// The client's models against `openapi.yaml`: the same members, and the contract's examples
/// decode. (The end-to-end tests check the values against the real service, which refuses
/// unknown fields.)
@Suite("The client's models match openapi.yaml")
struct ContractTests {
    static var spec: [String: Any] {
        let path = LiveCountersign.packageRoot + "/openapi.yaml"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let spec = try? Yams.load(yaml: text) as? [String: Any] else {
            fatalError("openapi.yaml does not load")
        }
        return spec
    }

    static func schema(_ name: String) -> [String: Any] {
        let schemas = (spec["components"] as? [String: Any])?["schemas"] as? [String: Any]
        return schemas?[name] as? [String: Any] ?? [:]
    }

    static func properties(_ schema: [String: Any]) -> Set<String> {
        Set((schema["properties"] as? [String: Any])?.keys.map { $0 } ?? [])
    }

    static func required(_ schema: [String: Any]) -> Set<String> {
        Set(schema["required"] as? [String] ?? [])
    }

    static func keys(of value: some Encodable) throws -> Set<String> {
        let data = try JSONCoding.encoder().encode(value)
        return Set((try JSONSerialization.jsonObject(with: data) as? [String: Any])?.keys.map { $0 } ?? [])
    }

    static let space = ProtectionSpace(
        host: "h", port: 1, protocolName: "https", realm: "r", authenticationMethod: .httpBasic, isProxy: false, proxyType: "https",
        receivesCredentialSecurely: true, distinguishedNames: [Data([1])], serverTrust: ServerTrustChain(certificates: [Data([2])])
    )

    static var record: DecisionRecord {
        get throws {
            try JSONCoding.decoder().decode(OutcomeResponse.self, from: Data(FakeCountersign.outcomeJSON().utf8)).decision
        }
    }

    /// Fully populated values of every model the client sends or reads, by schema name.
    static func models() throws -> [(String, any Encodable)] {
        let record = try Self.record
        return [
        ("ProtectionSpace", space),
        ("Challenge", Challenge(taskId: "t", protectionSpace: space, proposedCredential: .init(user: "u", hasPassword: true), previousFailureCount: 1,
                                failureResponse: .init(status: 401, headers: ["a": "b"]), error: .init(domain: "d", code: 1, message: "m"))),
        ("OpenSessionRequest", OpenSessionRequest(clientId: "c", label: "l", ttlSeconds: 60)),
        ("InvalidateSessionRequest", ["mode": InvalidationMode.cancel]),
        ("Session", CountersignSession(id: UUID(), tenantId: UUID(), clientId: "c", label: "l", createdAt: Date(), expiresAt: Date(), invalidatedAt: Date(),
                                       invalidationReason: .explicit, invalidationMode: .cancel, state: .invalidated)),
        ("DecisionAnswer", DecisionAnswer(decisionId: UUID(), disposition: .useCredential, credential: .password(user: "u", password: "p", domain: "D"),
                                          persistence: .forSession, scope: .task, remainingAttempts: 1, blockedUntil: Date(), rule: .init(id: "r", name: "n"),
                                          source: .policy, reason: "r", countedRejection: UUID(),
                                          evaluation: .init(trusted: true, host: "h", verifiedChain: ["CN=h"], evaluatedAt: Date(), chainSha256: String(repeating: "a", count: 64)))),
        ("ReleasedCredential", ReleasedCredential.password(user: "u", password: "p", domain: "D")),
        ("SubmitCredentialRequest", SubmitCredentialRequest(protectionSpace: space, user: "u", password: "p", domain: "D", persistence: .permanent)),
        ("Submission", Submission(stored: true, persistence: .permanent, credentialId: UUID(), created: true)),
        ("OutcomeRequest", OutcomeReport(outcome: .rejected, upstreamStatus: 401)),
        ("SecurityCheckChallengeList", SecurityCheckChallengeList(challenges: ["PinCodeAttempts": nil])),
        ("SecurityCheckAnswers", SecurityCheckAnswers(answers: [:])),
        ("SecurityCheckAnswer", SecurityCheckAnswer(action: .cancel, decisionId: UUID(), reason: "r")),
        ("SecurityCheckState", SecurityCheckState(
            securityCheck: "P", clientId: "c", state: .blocked, storedState: .blocked, attempts: 1, remainingAttempts: 0, expiresAt: Date(),
            totalFailures: 1, blocks: 1, lastChallengeAt: Date(), lastFailureAt: Date(), lastFailure: "f", lastSuccessAt: Date(),
            lastDecisionId: UUID(), updatedAt: Date()
        )),
        ("SecurityCheckReport", SecurityCheckReport(decision: record, applied: true, counter: .init(failures: 1), state: nil)),
        ("RawResponseRequest", rawResponse),
        ("ResponseAnswer", responseAnswer),
        ("ChallengeReport", challengeReport),
        ]
    }

    static let challengeReport = ChallengeReport(
        index: 0, scheme: "Digest", realm: "r", mechanism: "Digest SHA-256", stale: true, status: .malformed, code: "duplicate_parameter", reason: "r"
    )

    static let rawResponse = RawResponse(
        taskId: "t",
        status: 407,
        headers: [ResponseHeader("Proxy-Authenticate", "Basic realm=r")],
        request: ForwardedRequest(
            method: "GET", url: "http://h/", requestTarget: "http://h/", body: Data([1]), bodyHash: ForwardedBodyHash(algorithm: .sha256, value: "00")
        ),
        proxy: ForwardedProxy(host: "p", port: 3128, type: .https),
        previousDecisionId: UUID(),
        carriedHeader: true
    )

    static let responseAnswer = ResponseAnswer(
        decisionId: UUID(), disposition: .useCredential, reasonCode: .authorization, authorization: AuthorizationHeader(name: .authorization, value: "Basic x"),
        credential: .password(user: "u", password: "p", domain: "D"), persistence: .forSession, scope: .task, remainingAttempts: 1, blockedUntil: Date(),
        rule: .init(id: "r", name: "n"), source: .policy, reason: "r", countedRejection: UUID(),
        protectionSpace: .init(host: "h", port: 1, protocolName: "https", realm: "r", authenticationMethod: .httpDigest, isProxy: false),
        challenges: [challengeReport]
    )

    /// The schema at `path` below `schema`'s properties (through `oneOf`'s object, if any).
    static func nested(_ schema: [String: Any], _ path: String...) -> [String: Any] {
        var current = schema
        for name in path {
            current = (current["properties"] as? [String: Any])?[name] as? [String: Any] ?? [:]
            if let choices = current["oneOf"] as? [[String: Any]], let object = choices.first(where: { $0["type"] as? String == "object" }) {
                current = object
            }
        }
        return current
    }

    static func enumeration(_ schema: [String: Any]) -> Set<String> {
        Set((schema["enum"] as? [Any] ?? []).compactMap { $0 as? String })
    }

    static func encodedObject(_ value: some Encodable) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: try JSONCoding.encoder().encode(value)) as? [String: Any] ?? [:]
    }

    @Test("every member of the contract's schemas, and nothing else", arguments: ["ProtectionSpace", "Challenge", "OpenSessionRequest", "InvalidateSessionRequest", "Session", "DecisionAnswer", "ReleasedCredential", "SubmitCredentialRequest", "Submission", "OutcomeRequest", "SecurityCheckChallengeList", "SecurityCheckAnswers", "SecurityCheckAnswer", "SecurityCheckState", "SecurityCheckReport", "RawResponseRequest", "ResponseAnswer", "ChallengeReport"])
    func members(_ name: String) throws {
        let value = try #require(try Self.models().first { $0.0 == name }?.1)
        let schema = Self.schema(name)
        #expect(!Self.properties(schema).isEmpty, "no schema \(name)")
        #expect(try Self.keys(of: value) == Self.properties(schema))
    }

    @Test("the response schemas the client decodes have the members it knows")
    func responseMembers() throws {
        #expect(Self.properties(Self.schema("DecisionRecord")) == Set(DecisionRecord.CodingKeys.allNames))
        let outcome = Self.schema("OutcomeResponse")
        #expect(Self.properties(outcome) == ["decision", "counted", "counter", "disposition", "reasonCode"])
        let counter = (outcome["properties"] as? [String: Any])?["counter"] as? [String: Any] ?? [:]
        #expect(Self.properties(counter) == ["failures", "remainingAttempts", "blockedUntil"])
    }

    @Test("raw responses: the nested members and the closed and open value sets match the contract")
    func rawResponseMembers() throws {
        let request = Self.schema("RawResponseRequest")
        let sent = try Self.encodedObject(Self.rawResponse)
        #expect(Set((sent["request"] as? [String: Any] ?? [:]).keys) == Self.properties(Self.nested(request, "request")))
        #expect(Set((sent["proxy"] as? [String: Any] ?? [:]).keys) == Self.properties(Self.nested(request, "proxy")))
        let bodyHash = Self.nested(request, "request", "bodyHash")
        #expect(Set(((sent["request"] as? [String: Any])?["bodyHash"] as? [String: Any] ?? [:]).keys) == Self.properties(bodyHash))
        #expect(Set(ForwardedBodyHash.Algorithm.allCases.map(\.rawValue)) == Self.enumeration(Self.nested(bodyHash, "algorithm")))
        #expect(Set(ForwardedProxy.Kind.allCases.map(\.rawValue)) == Self.enumeration(Self.nested(request, "proxy", "type")))
        let statuses = Set((Self.nested(request, "status")["enum"] as? [Int]) ?? [])
        #expect(statuses == RawResponse.forwardableStatuses)
        #expect(sent["headers"] as? [[String]] == [["Proxy-Authenticate", "Basic realm=r"]])

        let answer = Self.schema("ResponseAnswer")
        #expect(Self.required(answer) == Self.properties(answer))
        let received = try Self.encodedObject(Self.responseAnswer)
        #expect(Set((received["authorization"] as? [String: Any] ?? [:]).keys) == Self.properties(Self.nested(answer, "authorization")))
        #expect(Set(AuthorizationHeader.Name.known.map(\.rawValue)) == Self.enumeration(Self.nested(answer, "authorization", "name")))
        #expect(Set((received["protectionSpace"] as? [String: Any] ?? [:]).keys) == Self.properties(Self.nested(answer, "protectionSpace")))
        #expect(Set(ResponseReasonCode.known.map(\.rawValue)) == Self.enumeration(Self.schema("ResponseReasonCode")))
        #expect(Set(ChallengeReport.Status.known.map(\.rawValue)) == Self.enumeration(Self.nested(Self.schema("ChallengeReport"), "status")))
        // Every member of the answer is sent, null when empty, as the service sends it.
        let empty = ResponseAnswer(
            decisionId: UUID(), disposition: .cancelAuthenticationChallenge, reasonCode: .serverRefused, source: .serverResponse, reason: "r",
            protectionSpace: .init(host: "h", port: 1, authenticationMethod: .httpBasic)
        )
        #expect(Set(try Self.encodedObject(empty).keys) == Self.properties(answer))
        let space = try #require(try Self.encodedObject(empty)["protectionSpace"] as? [String: Any])
        #expect(Set(space.keys) == Self.required(Self.nested(answer, "protectionSpace")))
        #expect(try Self.keys(of: ChallengeReport(index: 0, scheme: "Basic", status: .chosen, reason: "r")) == Self.required(Self.schema("ChallengeReport")))
    }

    /// The request and response examples of one operation.
    static func examples(_ path: String, _ method: String) -> (requests: [Any], responses: [Any]) {
        let operation = ((spec["paths"] as? [String: Any])?[path] as? [String: Any])?[method] as? [String: Any] ?? [:]
        func collect(_ media: [String: Any]?) -> [Any] {
            guard let media else { return [] }
            var found: [Any] = []
            if let example = media["example"] { found.append(example) }
            for case let named as [String: Any] in (media["examples"] as? [String: Any])?.values.map({ $0 }) ?? [] {
                if let value = named["value"] { found.append(value) }
            }
            return found
        }
        let request = collect(((operation["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/json"] as? [String: Any])
        var responses: [Any] = []
        for case let response as [String: Any] in (operation["responses"] as? [String: Any])?.values.map({ $0 }) ?? [] {
            responses += collect((response["content"] as? [String: Any])?["application/json"] as? [String: Any])
        }
        return (request, responses)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ example: Any) throws -> T {
        // YAML timestamps come back as dates; the wire has RFC 3339 text.
        func normalize(_ value: Any) -> Any {
            switch value {
            case let date as Date: return Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
            case let object as [String: Any]: return object.mapValues(normalize)
            case let array as [Any]: return array.map(normalize)
            default: return value
            }
        }
        let data = try JSONSerialization.data(withJSONObject: normalize(example))
        return try JSONCoding.decoder().decode(T.self, from: data)
    }

    @Test("the contract's examples of the client operations decode")
    func examples() throws {
        let challenges = Self.examples("/v1/sessions/{sessionId}/challenges", "post")
        #expect(challenges.requests.count == 4)
        for example in challenges.requests { _ = try Self.decode(Challenge.self, example) }
        let answers = challenges.responses.filter { ($0 as? [String: Any])?["decisionId"] != nil }
        #expect(answers.count == 6)
        for example in answers {
            let answer = try Self.decode(DecisionAnswer.self, example)
            guard answer.disposition == .useCredential else { continue }
            switch answer.credential?.kind {
            case .password?: #expect(answer.credential?.password != nil)
            case .clientIdentity?: #expect(answer.credential?.pkcs12 != nil && answer.credential?.passphrase != nil)
            default:
                #expect(answer.credential?.kind == .serverTrust)
                #expect(answer.evaluation?.trusted == true)
            }
        }
        for example in Self.examples("/v1/sessions", "post").requests { _ = try Self.decode(OpenSessionRequest.self, example) }
        for example in Self.examples("/v1/sessions/{sessionId}/invalidate", "post").requests {
            #expect((example as? [String: Any])?["mode"] as? String == InvalidationMode.finishTasks.rawValue)
        }
        for example in Self.examples("/v1/sessions/{sessionId}/credentials", "post").requests { _ = try Self.decode(SubmitCredentialRequest.self, example) }
        for example in Self.examples("/v1/decisions/{decisionId}/outcome", "post").requests { _ = try Self.decode(OutcomeReport.self, example) }
        let lists = Self.examples("/v1/sessions/{sessionId}/security-checks", "post")
        #expect(lists.requests.count == 2 && lists.responses.count >= 3)
        for example in lists.requests { _ = try Self.decode(SecurityCheckChallengeList.self, example) }
        for case let example as [String: Any] in lists.responses where example["answers"] != nil {
            let answers = try Self.decode(SecurityCheckAnswers.self, example)
            #expect(!answers.answers.isEmpty)
        }
        let success = Self.examples("/v1/sessions/{sessionId}/security-checks/{securityCheck}/success", "post")
        let report = try Self.decode(SecurityCheckReport.self, try #require(success.responses.first))
        #expect(report.state?.state == .success)
        for example in Self.examples("/v1/sessions/{sessionId}/security-checks/{securityCheck}/failure", "post").requests {
            _ = try Self.decode([String: JSONValue].self, example)
        }
        let raw = Self.examples("/v1/sessions/{sessionId}/responses", "post")
        #expect(raw.requests.count == 3)
        let forwarded = try raw.requests.map { try Self.decode(RawResponse.self, $0) }
        #expect(forwarded.contains { $0.status == 407 && $0.proxy?.port == 3128 })
        #expect(forwarded.contains { $0.status == 403 && $0.previousDecisionId != nil })
        #expect(forwarded.contains { $0.headers.filter { $0.name == "WWW-Authenticate" }.count == 2 })
        let rawAnswers = try raw.responses.filter { ($0 as? [String: Any])?["decisionId"] != nil }.map { try Self.decode(ResponseAnswer.self, $0) }
        #expect(rawAnswers.count == 3)
        let released = try #require(rawAnswers.first { $0.disposition == .useCredential })
        #expect(released.authorization?.name == .authorization)
        #expect(released.authorization?.value.hasPrefix("Digest ") == true)
        #expect(released.chosenChallenge?.mechanism == "Digest SHA-256")
        #expect(rawAnswers.contains { $0.reasonCode == .credentialBlocked && $0.countedRejection != nil && $0.authorization == nil })
        #expect(rawAnswers.contains { $0.reasonCode == .serverRefused && $0.source == .serverResponse && $0.challenges.isEmpty })
        for case let error as [String: Any] in raw.responses.compactMap({ ($0 as? [String: Any])?["error"] }) {
            let body = try JSONSerialization.data(withJSONObject: ["error": error])
            #expect(CountersignClient.serviceError(status: 400, body: body).serviceCode == error["code"] as? String)
        }
        #expect(raw.responses.contains { (($0 as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == CountersignClientError.Code.noReleasedCredential })
        #expect(raw.responses.contains { (($0 as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == CountersignClientError.Code.malformedChallenge })

        let errors = challenges.responses.compactMap { ($0 as? [String: Any])?["error"] as? [String: Any] }
        #expect(errors.contains { $0["code"] as? String == "session_invalidated" })
        for error in errors {
            let body = try JSONSerialization.data(withJSONObject: ["error": error])
            let code = try #require(error["code"] as? String)
            let message = try #require(error["message"] as? String)
            #expect(CountersignClient.serviceError(status: 409, body: body) == .service(status: 409, code: code, message: message))
        }
    }
}

extension DecisionRecord.CodingKeys {
    static var allNames: [String] { allCases.map(\.stringValue) }
}
