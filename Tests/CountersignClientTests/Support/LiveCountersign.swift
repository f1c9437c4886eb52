import CountersignCrypto
import CountersignHTTP
import CountersignPostgres
import CountersignTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// A real Countersign on a loopback port and a fresh database of its own, as fleet clients meet
/// it: the SDK talks to it over real sockets through URLSession.
struct LiveCountersign: Sendable {
    static let operatorKey = "client-sdk-test-operator-key-0123456789abcdef"

    /// The service's base URL.
    let baseURL: URL
    let admin: AdminAPI

    /// Runs `body` against a new service on a new database.
    static func run<T: Sendable>(_ body: @Sendable (LiveCountersign) async throws -> T) async throws -> T {
        let url = try await TestDatabase.freshDatabase()
        var configuration = ServiceConfiguration(database: TestDatabase.configuration(url, poolSize: 4), migrationsDirectory: packageRoot + "/migrations")
        configuration.operatorKey = try OperatorKey(operatorKey)
        configuration.masterKey = try SymmetricKey.random()
        configuration.apiKeyCacheTTL = .zero
        configuration.port = 0
        configuration.announcesShutdownSignals = false
        var logger = Logger(label: "countersign.client-test")
        logger.logLevel = ProcessInfo.processInfo.environment["COUNTERSIGN_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        let app = try buildApplication(configuration, logger: logger)
        return try await app.test(.live) { client in
            let port = try #require(client.port)
            let service = LiveCountersign(baseURL: URL(string: "http://127.0.0.1:\(port)")!, admin: AdminAPI(client: client))
            return try await body(service)
        }
    }

    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
        }
        fatalError("no Package.swift above \(#filePath)")
    }()
}

/// The admin and operator calls a test needs to set a tenant up and look at what happened.
struct AdminAPI: Sendable {
    let client: any TestClientProtocol

    struct Tenant: Sendable {
        let id: String
        let adminKey: String
        let clientKey: String
    }

    /// A new tenant with an admin key and a client key.
    func tenant() async throws -> Tenant {
        let created = try await call(.post, "/v1/tenants", key: LiveCountersign.operatorKey, json: #"{"name": "sdk-\#(UUID().uuidString.prefix(8))"}"#)
        try #require(created.status == 201, "\(created)")
        let id = try #require(created.object["id"] as? String)
        let admin = try await call(.post, "/v1/tenants/\(id)/keys", key: LiveCountersign.operatorKey, json: #"{"name": "admin"}"#)
        try #require(admin.status == 201, "\(admin)")
        let adminKey = try #require(admin.object["secret"] as? String)
        let client = try await call(.post, "/v1/keys", key: adminKey, json: #"{"name": "fleet", "role": "client"}"#)
        try #require(client.status == 201, "\(client)")
        return Tenant(id: id, adminKey: adminKey, clientKey: try #require(client.object["secret"] as? String))
    }

    /// Saves a password credential; returns its id.
    func credential(_ tenant: Tenant, json: String) async throws -> String {
        let reply = try await call(.post, "/v1/credentials", key: tenant.adminKey, json: json)
        try #require(reply.status == 201 || reply.status == 200, "\(reply)")
        return try #require(reply.object["id"] as? String)
    }

    /// Replaces the policy's rules and security-check handlers (JSON text of the arrays).
    func policy(_ tenant: Tenant, rules: String, securityChecks: String = "[]") async throws {
        let current = try await call(.get, "/v1/policy", key: tenant.adminKey)
        let version = current.object["version"] as? Int ?? 0
        let reply = try await call(
            .put, "/v1/policy", key: tenant.adminKey,
            json: #"{"version": \#(version), "rules": \#(rules), "securityChecks": \#(securityChecks)}"#
        )
        try #require(reply.status == 200, "\(reply)")
    }

    /// The tenant's rejection counters.
    func counters(_ tenant: Tenant) async throws -> [[String: Any]] {
        let reply = try await call(.get, "/v1/counters", key: tenant.adminKey)
        try #require(reply.status == 200, "\(reply)")
        return reply.object["counters"] as? [[String: Any]] ?? []
    }

    /// The decisions of a session, newest first.
    func decisions(_ tenant: Tenant, sessionId: UUID) async throws -> [[String: Any]] {
        let reply = try await call(.get, "/v1/decisions?sessionId=\(sessionId.uuidString.lowercased())", key: tenant.adminKey)
        try #require(reply.status == 200, "\(reply)")
        return reply.object["decisions"] as? [[String: Any]] ?? []
    }

    struct Reply: Sendable, CustomStringConvertible {
        let status: Int
        let body: Data
        var object: [String: Any] { (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:] }
        var description: String { "\(status) \(String(decoding: body, as: UTF8.self))" }
    }

    func call(_ method: HTTPRequest.Method, _ path: String, key: String, json: String? = nil) async throws -> Reply {
        var headers: HTTPFields = [.authorization: "Bearer \(key)"]
        var body: ByteBuffer?
        if let json {
            headers[.contentType] = "application/json"
            body = ByteBuffer(string: json)
        }
        let response = try await client.executeRequest(uri: path, method: method, headers: headers, body: body)
        return Reply(status: Int(response.status.code), body: Data(response.body.readableBytesView))
    }
}
