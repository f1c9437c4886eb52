import Foundation
import HTTPTypes
import Testing

/// A protection space as the tests send it.
struct Space: Encodable, Sendable {
    var host = "intranet.example.com"
    var port = 443
    var `protocol`: String? = "https"
    var realm: String? = "Intranet"
    var authenticationMethod = "NSURLAuthenticationMethodHTTPBasic"
    var isProxy: Bool?

    static let basic = Space()

    func with(_ change: (inout Space) -> Void) -> Space {
        var space = self
        change(&space)
        return space
    }
}

/// A challenge as the tests send it.
struct ChallengeBody: Encodable, Sendable {
    struct Proposed: Encodable, Sendable {
        var user: String?
        var hasPassword: Bool?
    }

    struct Failure: Encodable, Sendable {
        var status: Int
    }

    var taskId = "task-1"
    var protectionSpace = Space.basic
    var proposedCredential: Proposed?
    var previousFailureCount: Int?
    var failureResponse: Failure?
}

/// The methods as Apple spells them.
enum Method {
    static let basic = "NSURLAuthenticationMethodHTTPBasic"
    static let digest = "NSURLAuthenticationMethodHTTPDigest"
    static let `default` = "NSURLAuthenticationMethodDefault"
    static let ntlm = "NSURLAuthenticationMethodNTLM"
    static let negotiate = "NSURLAuthenticationMethodNegotiate"
    static let serverTrust = "NSURLAuthenticationMethodServerTrust"
}

extension Reply {
    var credentialUser: String? { (json["credential"] as? [String: Any])?["user"] as? String }
    var credentialPassword: String? { (json["credential"] as? [String: Any])?["password"] as? String }
    var ruleID: String? { (json["rule"] as? [String: Any])?["id"] as? String }
    func int(_ key: String) -> Int? { json[key] as? Int }
    var text: String { String(decoding: body, as: UTF8.self) }
}

extension TestAPI {
    /// Forwards `body` in `session`.
    func decide(_ tenant: Tenant, session: String, _ body: ChallengeBody = .init(), sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        try await call(.post, "/v1/sessions/\(session)/challenges", key: tenant.clientKey, json: body, sourceLocation: sourceLocation)
    }

    /// Forwards a challenge for `space` from `taskId` and requires a 200.
    func decided(
        _ tenant: Tenant,
        session: String,
        taskId: String = "task-1",
        space: Space = .basic,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Reply {
        let reply = try await decide(tenant, session: session, ChallengeBody(taskId: taskId, protectionSpace: space), sourceLocation: sourceLocation)
        try #require(reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
        return reply
    }

    /// Opens a session with the given body members.
    func openSession(_ tenant: Tenant, clientId: String = "device-1", ttlSeconds: Int? = nil, label: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        struct Body: Encodable { var clientId: String; var ttlSeconds: Int?; var label: String? }
        return try await call(.post, "/v1/sessions", key: tenant.clientKey, json: Body(clientId: clientId, ttlSeconds: ttlSeconds, label: label), sourceLocation: sourceLocation)
    }

    /// Sleeps until a little after the `expiresAt` of an opened session. Tests give sessions
    /// lifetimes long enough for their first steps on a busy machine, and wait out only the rest.
    func waitUntilExpired(_ opened: Reply, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let expiresAt = try #require(
            opened.string("expiresAt").flatMap { try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse($0) },
            sourceLocation: sourceLocation
        )
        try await Task.sleep(for: .milliseconds(Int(max(0, expiresAt.timeIntervalSinceNow) * 1000) + 300))
    }

    @discardableResult
    func outcome(_ tenant: Tenant, decision: String, _ outcome: String, upstreamStatus: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        struct Body: Encodable { var outcome: String; var upstreamStatus: Int? }
        return try await call(
            .post, "/v1/decisions/\(decision)/outcome", key: tenant.clientKey, json: Body(outcome: outcome, upstreamStatus: upstreamStatus),
            sourceLocation: sourceLocation
        )
    }

    @discardableResult
    func invalidate(_ tenant: Tenant, session: String, mode: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        try await call(.post, "/v1/sessions/\(session)/invalidate", key: tenant.clientKey, json: ["mode": mode], sourceLocation: sourceLocation)
    }

    /// Submits a credential the client obtained itself.
    func submit(
        _ tenant: Tenant,
        session: String,
        space: Space = .basic,
        user: String,
        password: String,
        persistence: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Reply {
        struct Body: Encodable { var protectionSpace: Space; var user: String; var password: String; var persistence: String }
        return try await call(
            .post, "/v1/sessions/\(session)/credentials", key: tenant.clientKey,
            json: Body(protectionSpace: space, user: user, password: password, persistence: persistence), sourceLocation: sourceLocation
        )
    }

    /// The tenant's rejection counters (of one credential when given).
    func counters(_ tenant: Tenant, credential: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [[String: Any]] {
        let reply = try await call(.get, "/v1/counters" + (credential.map { "?credentialId=\($0)" } ?? ""), key: tenant.adminKey, sourceLocation: sourceLocation)
        try #require(reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
        return try #require(reply["counters"] as? [[String: Any]], sourceLocation: sourceLocation)
    }

    /// A credential's history events.
    func history(_ tenant: Tenant, credential: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [[String: Any]] {
        let reply = try await call(.get, "/v1/credentials/\(credential)/history", key: tenant.adminKey, sourceLocation: sourceLocation)
        try #require(reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
        return try #require(reply["history"] as? [[String: Any]], sourceLocation: sourceLocation)
    }

    /// One decision record as admins see it.
    func decisionRecord(_ tenant: Tenant, _ id: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        let reply = try await call(.get, "/v1/decisions/\(id)", key: tenant.adminKey, sourceLocation: sourceLocation)
        try #require(reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
        return reply
    }

    /// A policy with one rule releasing credentials for intranet.example.com, with `then` members.
    @discardableResult
    func releasePolicy(_ tenant: Tenant, then extra: String = "", settings: String = "{}", sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        try await policy(
            tenant,
            rules: #"[{"id": "intranet", "name": "Intranet", "match": {"host": "*.example.com"}, "then": {"disposition": "useCredential"\#(extra.isEmpty ? "" : ", " + extra)}}]"#,
            settings: settings,
            sourceLocation: sourceLocation
        )
    }

    /// A policy answering every challenge `disposition`.
    @discardableResult
    func answerEverything(_ tenant: Tenant, _ disposition: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        try await policy(tenant, rules: #"[{"id": "all", "match": {}, "then": {"disposition": "\#(disposition)"}}]"#, sourceLocation: sourceLocation)
    }
}
