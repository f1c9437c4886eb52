import CountersignCrypto
import CountersignTestSupport
import Foundation
import Synchronization
import Testing

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
/// mod_auth_digest implements MD5 only), each with one user; `/stale/` is `/digest/` with nonces
/// that expire after twelve seconds. ``stop()`` kills it and removes the
/// directory; use ``run(basic:digest:_:)`` so that happens even when the test fails.
final class ApacheServer {
    static let binary = "/usr/sbin/apache2"
    static let modules = "/usr/lib/apache2/modules"
    static let basicRealm = "Countersign Basic"
    static let digestRealm = "Countersign Digest"

    /// Where it listens.
    let endpoint: ApacheEndpoint
    let directory: URL
    private let process: SpawnedProcess

    private init(port: Int, directory: URL, process: SpawnedProcess) {
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
            try await server.stop()
            return result
        } catch {
            try? await server.stop()
            throw error
        }
    }

    static func start(basic: (user: String, password: String), digest: (user: String, password: String)) async throws -> ApacheServer {
        try #require(FileManager.default.isExecutableFile(atPath: binary), "Apache httpd is not installed: run scripts/bootstrap test")
        var lastError = ""
        // A free port can be taken by someone else before Apache binds it: try a few.
        for _ in 0..<5 {
            let directory = try makeDirectory()
            let port = try LoopbackPort.free()
            try writeFiles(in: directory, port: port, basic: basic, digest: digest)
            let process = try SpawnedProcess(
                binary,
                arguments: ["-f", directory.appendingPathComponent("httpd.conf").path, "-DFOREGROUND"],
                output: directory.appendingPathComponent("console.log").path
            )
            let server = ApacheServer(port: port, directory: directory, process: process)
            if try await server.waitUntilServing() { return server }
            lastError = ["console.log", "error.log"]
                .compactMap { try? String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8) }
                .joined(separator: "\n")
            try await server.stop()
        }
        throw ApacheStartFailure(errorLog: lastError)
    }

    /// Stops Apache and its workers and removes its directory, on a thread of its own: it may
    /// wait seconds for the workers (see ``TestDatabase/onOwnThread(_:)``).
    func stop() async throws {
        try await TestDatabase.onOwnThread { [process, directory] in
            process.stop()
            try? FileManager.default.removeItem(at: directory)
        }
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
        for path in ["docs/basic", "docs/digest", "docs/stale", "run"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(path), withIntermediateDirectories: true)
        }
        // The workers run as www-data when the tests run as root: they must read the files.
        for path in ["", "docs", "docs/basic", "docs/digest", "docs/stale"] {
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
        try write("stale ok\n", "docs/stale/index.html")
        // htpasswd's {SHA} format and htdigest's user:realm:MD5(user:realm:password).
        try write("\(basic.user):{SHA}\(Data(Digest.hash(.sha1, Array(basic.password.utf8))).base64EncodedString())\n", "basic.pw")
        let ha1 = Digest.hash(.md5, Array("\(digest.user):\(digestRealm):\(digest.password)".utf8)).hexString
        try write("\(digest.user):\(digestRealm):\(ha1)\n", "digest.pw")

        let root = directory.path
        let asRoot = geteuid() == 0
        let modules = [
            "mpm_event", "authn_core", "authn_file", "authz_core", "authz_user", "auth_basic", "auth_digest",
        ]
            // Debian builds mod_unixd in; elsewhere it is a module, needed for User and Group.
            + (asRoot && FileManager.default.fileExists(atPath: "\(Self.modules)/mod_unixd.so") ? ["unixd"] : [])
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
            <Location "/stale">
                AuthType Digest
                AuthName "\(digestRealm)"
                AuthDigestProvider file
                AuthDigestAlgorithm MD5
                AuthDigestNonceLifetime 12
                AuthUserFile "\(root)/digest.pw"
                Require valid-user
            </Location>
            """
        try write(config, "httpd.conf")
    }
}

/// Where a started Apache listens, and a plain HTTP/1.1 client for it.
///
/// Not URLSession: on Linux, swift-corelibs-foundation's URLSession never completes a request
/// whose response is a 401 unless a delegate cancels it (and then there is no response to read),
/// and a client of this kind must see the 401 with its headers exactly as sent, repeats included.
struct ApacheEndpoint: Sendable {
    let port: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Sends a GET, with `authorization` as `Authorization` if given; returns the status, every
    /// header as `[name, value]` in order, and the body.
    func get(_ path: String, authorization: String? = nil) async throws -> (status: Int, headers: [[String]], body: String) {
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: countersign-tests\r\nConnection: close\r\n"
        if let authorization { request += "Authorization: \(authorization)\r\n" }
        request += "\r\n"
        return try await RawHTTP.exchange(request, port: port)
    }
}

/// Apache exited or never answered; its error log says why.
struct ApacheStartFailure: Error, CustomStringConvertible {
    let errorLog: String
    var description: String { "Apache httpd did not start: \(errorLog)" }
}

/// A long-running child process (a server) in a process group of its own, started with the
/// default signal mask and dispositions. Foundation's
/// `Process` passes on the spawning thread's mask, and test runner threads block SIGTERM, so an
/// Apache started that way could never be stopped politely. (`ChildProcess` of the test support
/// runs a program to its end; this one stops a server when asked.)
final class SpawnedProcess: Sendable {
    let pid: pid_t
    private let exited = Mutex(false)

    init(_ path: String, arguments: [String], output: String) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGWINCH, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard status == 0 else { throw ApacheStartFailure(errorLog: "posix_spawn \(path): \(String(cString: strerror(status)))") }
        self.pid = pid
    }

    deinit { stop() }

    var isRunning: Bool {
        exited.withLock { exited in
            guard !exited else { return false }
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            // ECHILD: someone else reaped it (Foundation reaps the children of its own Process).
            if reaped == pid || (reaped == -1 && errno == ECHILD) { exited = true }
            return !exited
        }
    }

    /// SIGTERM (Apache stops its workers, then itself), up to five seconds for it, then
    /// SIGKILL for the whole group, while the parent still lives and so the group is surely its.
    func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        for _ in 0..<50 where isRunning {
            usleep(100_000)
        }
        guard isRunning else { return }
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        exited.withLock { $0 = true }
    }
}
