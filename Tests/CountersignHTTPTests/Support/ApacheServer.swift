import CountersignCrypto
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Apache httpd from the distribution (`apache2` on Debian, installed by `scripts/bootstrap test`),
/// started with a minimal configuration of its own in a temporary directory, on a free loopback
/// port: a real upstream server that nobody here wrote.
///
/// `/basic/` is protected by Basic and `/digest/` by Digest (`AuthDigestAlgorithm MD5`: Debian's
/// mod_auth_digest implements MD5 only), each with one user. ``stop()`` kills it and removes the
/// directory; use ``run(basic:digest:_:)`` so that happens even when the test fails.
final class ApacheServer {
    static let binary = "/usr/sbin/apache2"
    static let modules = "/usr/lib/apache2/modules"
    static let basicRealm = "Countersign Basic"
    static let digestRealm = "Countersign Digest"

    /// Where it listens.
    let endpoint: ApacheEndpoint
    let directory: URL
    private let process: Process

    private init(port: Int, directory: URL, process: Process) {
        self.endpoint = ApacheEndpoint(port: port)
        self.directory = directory
        self.process = process
    }

    /// Starts Apache, runs `body` with it, and stops it whatever `body` does.
    static func run<T>(
        basic: (user: String, password: String),
        digest: (user: String, password: String),
        _ body: (ApacheEndpoint) async throws -> T
    ) async throws -> T {
        let server = try await start(basic: basic, digest: digest)
        do {
            let result = try await body(server.endpoint)
            server.stop()
            return result
        } catch {
            server.stop()
            throw error
        }
    }

    static func start(basic: (user: String, password: String), digest: (user: String, password: String)) async throws -> ApacheServer {
        try #require(FileManager.default.isExecutableFile(atPath: binary), "Apache httpd is not installed: run scripts/bootstrap test")
        var lastError = ""
        // A free port can be taken by someone else before Apache binds it: try a few.
        for _ in 0..<5 {
            let directory = try makeDirectory()
            let port = try freeLoopbackPort()
            try writeFiles(in: directory, port: port, basic: basic, digest: digest)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["-f", directory.appendingPathComponent("httpd.conf").path, "-DFOREGROUND"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let server = ApacheServer(port: port, directory: directory, process: process)
            if try await server.waitUntilServing() { return server }
            lastError = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            server.stop()
        }
        throw ApacheStartFailure(errorLog: lastError)
    }

    /// Kills Apache (its children go with it) and removes its directory.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    private func waitUntilServing() async throws -> Bool {
        for _ in 0..<100 {
            guard process.isRunning else { return false }
            if let probe = try? await endpoint.get("/basic/index.html"), probe.status == 401 { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    private static func makeDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-apache-\(UUID().uuidString.prefix(8))")
        for path in ["docs/basic", "docs/digest", "run"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(path), withIntermediateDirectories: true)
        }
        // The workers run as www-data when the tests run as root: they must read the files.
        for path in ["", "docs", "docs/basic", "docs/digest"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.appendingPathComponent(path).path)
        }
        return directory
    }

    private static func writeFiles(
        in directory: URL,
        port: Int,
        basic: (user: String, password: String),
        digest: (user: String, password: String)
    ) throws {
        func write(_ text: String, _ path: String) throws {
            let url = directory.appendingPathComponent(path)
            try text.write(to: url, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        }
        try write("basic ok\n", "docs/basic/index.html")
        try write("digest ok\n", "docs/digest/index.html")
        // htpasswd's {SHA} format and htdigest's user:realm:MD5(user:realm:password).
        try write("\(basic.user):{SHA}\(Data(Digest.hash(.sha1, Array(basic.password.utf8))).base64EncodedString())\n", "basic.pw")
        let ha1 = Digest.hash(.md5, Array("\(digest.user):\(digestRealm):\(digest.password)".utf8)).hexString
        try write("\(digest.user):\(digestRealm):\(ha1)\n", "digest.pw")

        let root = directory.path
        let asRoot = geteuid() == 0
        let modules = [
            "mpm_event", "authn_core", "authn_file", "authz_core", "authz_user", "auth_basic", "auth_digest",
        ] + (asRoot ? ["unixd"] : [])
        let config = """
            ServerRoot "\(root)"
            ServerName 127.0.0.1
            Listen 127.0.0.1:\(port)
            PidFile "\(root)/run/httpd.pid"
            DefaultRuntimeDir "\(root)/run"
            ErrorLog "\(root)/error.log"
            LogLevel warn
            \(modules.map { "LoadModule \($0)_module \(Self.modules)/mod_\($0).so" }.joined(separator: "\n"))
            \(asRoot ? "User www-data\nGroup www-data" : "")
            StartServers 1
            DocumentRoot "\(root)/docs"
            <Location "/basic">
                AuthType Basic
                AuthName "\(basicRealm)"
                AuthBasicProvider file
                AuthUserFile "\(root)/basic.pw"
                Require valid-user
            </Location>
            <Location "/digest">
                AuthType Digest
                AuthName "\(digestRealm)"
                AuthDigestProvider file
                AuthDigestAlgorithm MD5
                AuthUserFile "\(root)/digest.pw"
                Require valid-user
            </Location>
            """
        try write(config, "httpd.conf")
    }

    /// A loopback port nobody listens on right now.
    private static func freeLoopbackPort() throws -> Int {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        try #require(named == 0)
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Where a started Apache listens, and a plain HTTP client for it.
struct ApacheEndpoint: Sendable {
    let port: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Sends a GET, with `authorization` as `Authorization` if given; returns the status and headers.
    func get(_ path: String, authorization: String? = nil) async throws -> (status: Int, headers: [[String]], body: String) {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = "GET"
        request.timeoutInterval = 10
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        let (data, response) = try await Self.session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        let headers = http.allHeaderFields.compactMap { name, value -> [String]? in
            guard let name = name as? String, let value = value as? String else { return nil }
            return [name, value]
        }
        return (http.statusCode, headers, String(decoding: data, as: UTF8.self))
    }

    /// No cookies, caches or stored credentials: every request goes out exactly as built.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCredentialStorage = nil
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }()
}

/// Apache exited or never answered; its error log says why.
struct ApacheStartFailure: Error, CustomStringConvertible {
    let errorLog: String
    var description: String { "Apache httpd did not start: \(errorLog)" }
}
