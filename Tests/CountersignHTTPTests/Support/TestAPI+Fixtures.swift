import Foundation
import HTTPTypes
import Testing

/// Tenants, keys, sessions: the steps most tests start with.
extension TestAPI {
    struct Tenant: Sendable {
        let id: String
        let adminKey: String
        let clientKey: String
    }

    /// A new tenant with an admin key (from the operator) and a client key (from the admin).
    func tenant(_ name: String = "tenant-\(UUID().uuidString.prefix(8))", sourceLocation: SourceLocation = #_sourceLocation) async throws -> Tenant {
        let created = try await call(.post, "/v1/tenants", key: TestService.operatorKey, json: ["name": name], sourceLocation: sourceLocation)
        try #require(created.status == 201, "\(created)", sourceLocation: sourceLocation)
        let id = try #require(created.string("id"))
        let admin = try await call(.post, "/v1/tenants/\(id)/keys", key: TestService.operatorKey, json: ["name": "admin"], sourceLocation: sourceLocation)
        try #require(admin.status == 201, "\(admin)", sourceLocation: sourceLocation)
        let adminKey = try #require(admin.string("secret"))
        let client = try await call(.post, "/v1/keys", key: adminKey, json: ["name": "fleet", "role": "client"], sourceLocation: sourceLocation)
        try #require(client.status == 201, "\(client)", sourceLocation: sourceLocation)
        return Tenant(id: id, adminKey: adminKey, clientKey: try #require(client.string("secret")))
    }

    /// Revokes the tenant's client key (through this instance).
    func revokeClientKey(_ tenant: Tenant, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let keys = try await call(.get, "/v1/keys", key: tenant.adminKey, sourceLocation: sourceLocation)
        let id = try #require(
            (keys["keys"] as? [[String: Any]])?.first { $0["role"] as? String == "client" }?["id"] as? String, "\(keys)", sourceLocation: sourceLocation
        )
        try #require(try await call(.delete, "/v1/keys/\(id)", key: tenant.adminKey, sourceLocation: sourceLocation).status == 200, sourceLocation: sourceLocation)
    }

    /// Opens a session for `clientId` and returns its id.
    func session(_ tenant: Tenant, clientId: String = "device-1", sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let reply = try await call(.post, "/v1/sessions", key: tenant.clientKey, json: ["clientId": clientId], sourceLocation: sourceLocation)
        try #require(reply.status == 201, "\(reply)", sourceLocation: sourceLocation)
        return try #require(reply.string("id"))
    }

    /// Saves a tenant credential and returns its id.
    func credential(
        _ tenant: Tenant,
        host: String = "intranet.example.com",
        account: String = "svc",
        password: String = "s3cret",
        extra: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        var body = ["host": host, "account": account, "password": password]
        body.merge(extra) { _, new in new }
        let reply = try await call(.post, "/v1/credentials", key: tenant.adminKey, json: body, sourceLocation: sourceLocation)
        try #require(reply.status == 201 || reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
        return try #require(reply.string("id"))
    }

    /// Replaces the policy with `rules` (JSON text of the rules array).
    @discardableResult
    func policy(_ tenant: Tenant, rules: String, settings: String = "{}", sourceLocation: SourceLocation = #_sourceLocation) async throws -> Reply {
        let current = try await call(.get, "/v1/policy", key: tenant.adminKey, sourceLocation: sourceLocation)
        let version = current.json["version"] as? Int ?? 0
        let reply = try await call(
            .put, "/v1/policy", key: tenant.adminKey,
            json: #"{"version": \#(version), "settings": \#(settings), "rules": \#(rules)}"#,
            sourceLocation: sourceLocation
        )
        try #require(reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
        return reply
    }

    /// Forwards a challenge; `space` and `extra` are JSON object members (text).
    func challenge(
        _ tenant: Tenant,
        session: String,
        taskId: String = "task-1",
        host: String = "intranet.example.com",
        method: String = "NSURLAuthenticationMethodHTTPBasic",
        realm: String = "Intranet",
        extra: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Reply {
        let body = """
            {"taskId": "\(taskId)", "protectionSpace": {"host": "\(host)", "port": 443, "protocol": "https", "realm": "\(realm)",
             "authenticationMethod": "\(method)"}\(extra.isEmpty ? "" : ", " + extra)}
            """
        return try await call(.post, "/v1/sessions/\(session)/challenges", key: tenant.clientKey, json: body, sourceLocation: sourceLocation)
    }
}
