import CountersignCore
import CountersignCrypto
import Foundation
import Testing

/// Forwarding raw responses, and checking the Digest headers that come back.
extension TestAPI {
    /// Forwards a raw response; `headers` are `[name, value]` pairs.
    func response(
        _ tenant: Tenant,
        session: String,
        taskId: String = "task-1",
        status: Int = 401,
        headers: [[String]],
        method: String = "GET",
        url: String = "https://files.example.com/reports/q3.pdf",
        extraRequest: [String: String] = [:],
        proxy: [String: any Sendable]? = nil,
        previousDecisionId: String? = nil,
        carriedHeader: Bool? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Reply {
        var request: [String: any Sendable] = ["method": method, "url": url]
        request.merge(extraRequest) { _, new in new }
        var body: [String: any Sendable] = ["taskId": taskId, "status": status, "headers": headers, "request": request]
        if let proxy { body["proxy"] = proxy }
        if let previousDecisionId { body["previousDecisionId"] = previousDecisionId }
        if let carriedHeader { body["carriedHeader"] = carriedHeader }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        return try await call(.post, "/v1/sessions/\(session)/responses", key: tenant.clientKey, json: json, sourceLocation: sourceLocation)
    }

    /// Saves a credential from JSON object members (text), such as `"isProxy": true`.
    func credential(_ tenant: Tenant, json members: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let reply = try await call(.post, "/v1/credentials", key: tenant.adminKey, json: "{\(members)}", sourceLocation: sourceLocation)
        try #require(reply.status == 201 || reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
        return try #require(reply.string("id"))
    }
}

extension Reply {
    /// `authorization.value` of a response answer.
    var authorizationValue: String? { (json["authorization"] as? [String: Any])?["value"] as? String }
    /// `authorization.name` of a response answer.
    var authorizationName: String? { (json["authorization"] as? [String: Any])?["name"] as? String }
    /// `challenges[].status` of a response answer.
    var challengeStatuses: [String] { (json["challenges"] as? [[String: Any]])?.compactMap { $0["status"] as? String } ?? [] }
}

/// A Digest `Authorization` value taken apart, and checked the way a server checks it.
struct DigestHeader {
    let parameters: [String: String]

    init(_ value: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        // An Authorization value has the grammar of a challenge: scheme, then auth-params.
        let parsed = try #require(try AuthenticationChallengeParser().parse(value).first, sourceLocation: sourceLocation)
        #expect(parsed.scheme == .digest, sourceLocation: sourceLocation)
        var parameters: [String: String] = [:]
        for parameter in parsed.parameters { parameters[parameter.name] = parameter.value }
        self.parameters = parameters
    }

    subscript(_ name: String) -> String? { parameters[name] }

    /// The response a server holding `password` expects (RFC 7616 §3.4.1, plain algorithms).
    func expectedResponse(password: String, method: String, body: [UInt8] = []) -> String {
        let algorithm: HashAlgorithm =
            switch parameters["algorithm"]?.uppercased() {
            case "SHA-256": .sha256
            case "SHA-512-256": .sha512_256
            default: .md5
            }
        func h(_ text: String) -> String { Digest.hash(algorithm, Array(text.utf8)).hexString }
        let ha1 = h("\(parameters["username"] ?? ""):\(parameters["realm"] ?? ""):\(password)")
        let ha2 =
            parameters["qop"] == "auth-int"
            ? h("\(method):\(parameters["uri"] ?? ""):\(Digest.hash(algorithm, body).hexString)")
            : h("\(method):\(parameters["uri"] ?? "")")
        return h("\(ha1):\(parameters["nonce"] ?? ""):\(parameters["nc"] ?? ""):\(parameters["cnonce"] ?? ""):\(parameters["qop"] ?? ""):\(ha2)")
    }
}
