import CountersignCrypto
import CountersignTestSupport
import Foundation
import Testing

/// TLS challenges and client identities: the steps their tests share.
extension TestAPI {
    /// Uploads `identity` as a PKCS#12 file and returns the new identity's id.
    func identity(_ tenant: Tenant, _ identity: TestPKI.Identity, label: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        var body = ["pkcs12": Data(identity.pkcs12).base64EncodedString(), "password": identity.password]
        if let label { body["label"] = label }
        let reply = try await call(.post, "/v1/identities", key: tenant.adminKey, json: body, sourceLocation: sourceLocation)
        try #require(reply.status == 201, "\(reply)", sourceLocation: sourceLocation)
        return try #require(reply.string("id"))
    }

    /// Uploads a leaf and its key as a PEM identity and returns its id.
    func identity(_ tenant: Tenant, pem leaf: TestPKI.Leaf, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let reply = try await call(
            .post, "/v1/identities", key: tenant.adminKey, json: ["privateKey": leaf.keyPEM, "certificateChain": leaf.chainPEM],
            sourceLocation: sourceLocation
        )
        try #require(reply.status == 201, "\(reply)", sourceLocation: sourceLocation)
        return try #require(reply.string("id"))
    }

    /// Forwards a server-trust challenge carrying `chain` (DER, leaf first) as base64.
    func trustChallenge(
        _ tenant: Tenant,
        session: String,
        host: String = "localhost",
        port: Int = 443,
        chain: [[UInt8]],
        taskId: String = "task-1",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Reply {
        try await trustChallenge(
            tenant, session: session, host: host, port: port, encodedChain: chain.map { Data($0).base64EncodedString() }, taskId: taskId,
            sourceLocation: sourceLocation
        )
    }

    /// Forwards a server-trust challenge with the chain exactly as given (already base64).
    func trustChallenge(
        _ tenant: Tenant,
        session: String,
        host: String = "localhost",
        port: Int = 443,
        encodedChain: [String]?,
        taskId: String = "task-1",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Reply {
        var space: [String: any Sendable] = [
            "host": host, "port": port, "protocol": "https", "authenticationMethod": "NSURLAuthenticationMethodServerTrust",
        ]
        if let encodedChain { space["serverTrust"] = ["certificates": encodedChain] }
        let body = try JSONSerialization.data(withJSONObject: ["taskId": taskId, "protectionSpace": space])
        return try await call(
            .post, "/v1/sessions/\(session)/challenges", key: tenant.clientKey, json: String(decoding: body, as: UTF8.self),
            sourceLocation: sourceLocation
        )
    }

    /// Forwards a client-certificate challenge whose server accepts the CAs named `names` (DER).
    func certificateChallenge(
        _ tenant: Tenant,
        session: String,
        host: String = "mtls.example.com",
        port: Int = 443,
        names: [[UInt8]]?,
        taskId: String = "task-1",
        previousFailureCount: Int = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Reply {
        var space: [String: any Sendable] = [
            "host": host, "port": port, "protocol": "https", "authenticationMethod": "NSURLAuthenticationMethodClientCertificate",
        ]
        if let names { space["distinguishedNames"] = names.map { Data($0).base64EncodedString() } }
        let body = try JSONSerialization.data(withJSONObject: ["taskId": taskId, "protectionSpace": space, "previousFailureCount": previousFailureCount])
        return try await call(
            .post, "/v1/sessions/\(session)/challenges", key: tenant.clientKey, json: String(decoding: body, as: UTF8.self),
            sourceLocation: sourceLocation
        )
    }

    /// The decisions recorded for a session.
    func decisions(_ tenant: Tenant, session: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [[String: Any]] {
        let reply = try await call(.get, "/v1/decisions?sessionId=\(session)", key: tenant.adminKey, sourceLocation: sourceLocation)
        try #require(reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
        return reply.json["decisions"] as? [[String: Any]] ?? []
    }
}

extension Reply {
    /// `credential` of a decision answer.
    var credential: [String: Any]? { json["credential"] as? [String: Any] }
    /// `evaluation` of a decision answer.
    var evaluation: [String: Any]? { json["evaluation"] as? [String: Any] }
    /// `evaluation.failure.code` of a decision answer.
    var trustFailureCode: String? { (evaluation?["failure"] as? [String: Any])?["code"] as? String }
}

/// Rules as the JSON text `TestAPI.policy` takes.
enum TLSRules {
    /// One server-trust rule for `host` with `trust` settings (JSON object text) and more `then` members.
    static func serverTrust(host: String = "localhost", trust: String, then extra: String = "") -> String {
        """
        [{"id": "tls", "match": {"host": "\(host)", "methods": ["NSURLAuthenticationMethodServerTrust"]},
          "then": {"disposition": "useCredential", "trust": \(trust)\(extra.isEmpty ? "" : ", " + extra)}}]
        """
    }

    /// Trust settings with `anchors` (PEM) as the only anchors and optional pins.
    static func anchored(_ anchors: [String], pins: [String]? = nil, allowExpired: Bool? = nil) -> String {
        var object: [String: Any] = ["anchors": anchors, "useSystemAnchors": false]
        if let pins { object["pins"] = pins }
        if let allowExpired { object["allowExpired"] = allowExpired }
        return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// One client-certificate rule for `host` with more `then` members.
    static func clientCertificate(host: String = "mtls.example.com", then extra: String = "") -> String {
        """
        [{"id": "mtls", "match": {"host": "\(host)", "methods": ["NSURLAuthenticationMethodClientCertificate"]},
          "then": {"disposition": "useCredential"\(extra.isEmpty ? "" : ", " + extra)}}]
        """
    }
}
