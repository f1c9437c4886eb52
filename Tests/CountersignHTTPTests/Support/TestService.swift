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

/// A Countersign service on a fresh database of its own, driven through HummingbirdTesting,
/// with every response checked against openapi.yaml.
struct TestService {
    static let operatorKey = "test-operator-key-0123456789abcdefghijklmnop"

    /// The executable that `run(_:)` runs `body` against instead of an in-process service:
    /// scripts/test runs the tests again against the release build this way, since an optimised
    /// build can go wrong where the debug one does not (a security-check list once trapped every
    /// release process and no debug test).
    static let liveExecutable = ProcessInfo.processInfo.environment["COUNTERSIGN_TEST_EXECUTABLE"].flatMap { $0.isEmpty ? nil : $0 }

    /// Runs `body` against a new service on a new database, with the default configuration: the
    /// service in this process, or a `countersign serve` process of `liveExecutable`.
    static func run(_ body: @Sendable (TestAPI) async throws -> Void) async throws {
        guard let liveExecutable else { return try await run(.router, configure: { _ in }, logger: nil, body) }
        #expect(FileManager.default.isExecutableFile(atPath: liveExecutable), "COUNTERSIGN_TEST_EXECUTABLE names no executable")
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let instance = try await ServiceProcess.ready(databaseURL: try await TestDatabase.freshDatabase(), keys: keys)
        defer { instance.stop() }
        let client = instance.client()
        // The process's log says why it died (a trap's message and backtrace); it goes with its
        // directory at the end.
        let died = { instance.isRunning ? "" : "; the service process exited, its log ends: \(instance.log.suffix(6000))" }
        do {
            try await body(TestAPI(client))
        } catch {
            try? await client.shutdown()
            throw ServiceProcessError(description: "\(error)\(died())")
        }
        try await client.shutdown()
        let exited = died()
        #expect(exited.isEmpty, "\(exited)")
    }

    /// Runs `body` against a new service on a new database. `configure` adjusts the
    /// configuration first (defaults: operator key, a random master key, no API-key cache).
    static func run(
        _ framework: TestingSetup = .router,
        configure: (inout ServiceConfiguration) -> Void = { _ in },
        logger: Logger? = nil,
        _ body: @Sendable (TestAPI) async throws -> Void
    ) async throws {
        var configuration = try await configuration()
        configure(&configuration)
        try await run(configuration: configuration, framework, logger: logger, body)
    }

    /// `logger`: where the service logs (default: a quiet one, its level from
    /// `COUNTERSIGN_TEST_LOG_LEVEL`).
    static func run(
        configuration: ServiceConfiguration,
        _ framework: TestingSetup = .router,
        logger: Logger? = nil,
        _ body: @Sendable (TestAPI) async throws -> Void
    ) async throws {
        let logger = logger ?? {
            var logger = Logger(label: "countersign.test")
            logger.logLevel = ProcessInfo.processInfo.environment["COUNTERSIGN_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
            return logger
        }()
        let app = try buildApplication(configuration, logger: logger)
        try await app.test(framework) { client in
            try await body(TestAPI(client: client))
        }
    }

    /// The configuration of a test service on a fresh database.
    /// Runs `body` against a service whose database `side`, a pool of its own, can change behind
    /// the service's back (or make fail).
    static func withSideAccess(_ body: @escaping @Sendable (TestAPI, _ side: PostgresPool) async throws -> Void) async throws {
        let configuration = try await configuration()
        let side = PostgresPool(configuration: PostgresConfiguration(connectionString: configuration.database.connectionString, poolSize: 1))
        try await run(configuration: configuration) { api in try await body(api, side) }
        await side.close()
    }

    static func configuration(databaseURL: String? = nil) async throws -> ServiceConfiguration {
        let url: String
        if let databaseURL { url = databaseURL } else { url = try await TestDatabase.freshDatabase() }
        var configuration = ServiceConfiguration(database: TestDatabase.configuration(url, poolSize: 4), migrationsDirectory: Self.migrationsDirectory)
        configuration.operatorKey = try OperatorKey(operatorKey)
        configuration.masterKey = try SymmetricKey.random()
        configuration.apiKeyCacheTTL = .zero
        configuration.port = 0
        configuration.announcesShutdownSignals = false
        return configuration
    }

    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
        }
        fatalError("no Package.swift above \(#filePath)")
    }()

    static var migrationsDirectory: String { packageRoot + "/migrations" }
}

/// Calls the API the way a client would, and checks every response against the contract.
struct TestAPI: Sendable {
    /// Sends one request and returns status, headers and body.
    typealias Transport = @Sendable (String, HTTPRequest.Method, HTTPFields, ByteBuffer?) async throws -> (status: Int, headers: HTTPFields, body: Data)

    let transport: Transport
    /// Where the service listens, when the test runs it live.
    var port: Int?

    init(client: any TestClientProtocol) {
        port = client.port
        transport = { uri, method, headers, body in
            let response = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body)
            return (Int(response.status.code), response.headers, Data(response.body.readableBytesView))
        }
    }

    /// Talks to a service through `transport` (another process, say).
    init(transport: @escaping Transport) {
        self.transport = transport
    }
    static let contract: OpenAPIContract = {
        do { return try OpenAPIContract.repository() } catch { fatalError("openapi.yaml does not load: \(error)") }
    }()

    /// Sends a request. `json` is sent as the body (a `String` as is, anything else encoded);
    /// `key` as the bearer key.
    @discardableResult
    func call(
        _ method: HTTPRequest.Method,
        _ path: String,
        key: String? = nil,
        json: (any Encodable & Sendable)? = nil,
        headers extra: HTTPFields = [:],
        checkContract: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Reply {
        var headers = extra
        if let key { headers[.authorization] = "Bearer \(key)" }
        var body: ByteBuffer?
        if let json {
            let data: Data
            if let text = json as? String {
                data = Data(text.utf8)
            } else {
                data = try JSONEncoder().encode(json)
            }
            body = ByteBuffer(bytes: data)
            if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        }
        let response = try await transport(path, method, headers, body)
        let reply = Reply(status: response.status, headers: response.headers, body: response.body)
        if checkContract {
            for problem in Self.contract.validateResponse(
                method: method.rawValue, path: path, status: reply.status, contentType: reply.headers[.contentType], body: reply.body
            ) {
                Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation)
            }
        }
        return reply
    }
}

/// A response, with its JSON at hand.
struct Reply: Sendable, CustomStringConvertible {
    let status: Int
    let headers: HTTPFields
    let body: Data

    /// The body as a JSON object (empty when it is not one).
    var json: [String: any Sendable] {
        (try? JSONSerialization.jsonObject(with: body) as? [String: any Sendable]) ?? [:]
    }

    /// `error.code` of an error body.
    var errorCode: String? {
        (json["error"] as? [String: Any])?["code"] as? String
    }

    subscript(_ key: String) -> (any Sendable)? { json[key] }

    func string(_ key: String) -> String? { json[key] as? String }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            return try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
        }
        return try decoder.decode(T.self, from: body)
    }

    var description: String { "\(status) \(String(decoding: body, as: UTF8.self))" }
}
