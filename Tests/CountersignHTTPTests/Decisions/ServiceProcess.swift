import CountersignCrypto
import CountersignTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `countersign serve` process, as an operator runs it, for tests that need several
/// instances on one database. `stop()` sends SIGTERM (then SIGKILL if it lingers).
///
/// `@unchecked Sendable`: `Process` is not marked Sendable, but it is only configured in
/// `init`; afterwards this class only reads its state and signals it, which `Process` and the
/// kernel make safe from any thread.
final class ServiceProcess: @unchecked Sendable {
    let port: Int
    let logFile: URL
    private let process: Process

    /// The executable `swift build` leaves beside the test bundle, or the one
    /// `COUNTERSIGN_TEST_EXECUTABLE` names (scripts/test's release run).
    static var executable: String {
        TestService.liveExecutable ?? TestService.packageRoot + "/.build/debug/countersign"
    }

    /// Files every instance of one test shares: the operator key and the master key.
    struct Keys {
        let directory: URL
        let operatorKeyFile: String
        let masterKeyFile: String

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            operatorKeyFile = directory.appendingPathComponent("operator.key").path
            masterKeyFile = directory.appendingPathComponent("master.key").path
            try TestService.operatorKey.write(toFile: operatorKeyFile, atomically: true, encoding: .utf8)
            let hex = try SecureRandom.bytes(32).map { String(format: "%02x", $0) }.joined()
            try hex.write(toFile: masterKeyFile, atomically: true, encoding: .utf8)
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    init(databaseURL: String, keys: Keys, logLevel: String = "error", arguments extra: [String] = []) throws {
        port = try LoopbackPort.free()
        logFile = keys.directory.appendingPathComponent("instance-\(port).log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let log = try FileHandle(forWritingTo: logFile)
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = [
            "serve", "--database-url", databaseURL, "--port", String(port), "--operator-key-file", keys.operatorKeyFile,
            "--master-key-file", keys.masterKeyFile, "--log-level", logLevel, "--migrations-dir", TestService.migrationsDirectory,
            "--api-key-cache-seconds", "0",
        ] + extra
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// A new instance once `/readyz` answers 200. Started again on another port when the one
    /// `LoopbackPort` found free was bound by another process before the instance could listen
    /// on it: a port can only be checked, not held for a child process (seen once in CI).
    static func ready(databaseURL: String, keys: Keys, logLevel: String = "error", arguments extra: [String] = []) async throws -> ServiceProcess {
        var attempt = 1
        while true {
            let instance = try ServiceProcess(databaseURL: databaseURL, keys: keys, logLevel: logLevel, arguments: extra)
            do {
                try await instance.waitUntilReady()
                return instance
            } catch where attempt < 3 && !instance.isRunning && instance.log.contains("the address is in use") {
                attempt += 1
            }
        }
    }

    /// The status `GET path` gets, or `nil` when nothing answers.
    func status(of path: String) async -> Int? {
        try? await TestClient.withClient(host: "127.0.0.1", port: port) { client in
            Int(try await client.execute(.init(path, method: .get, authority: "localhost")).status.code)
        }
    }

    /// The status `GET path` gets once the instance listens (within ten seconds), or `nil`.
    func statusOnceListening(of path: String) async throws -> Int? {
        for _ in 0..<100 where process.isRunning {
            if let status = await status(of: path) { return status }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// Waits until `/readyz` answers 200.
    func waitUntilReady(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard process.isRunning else { break }
            if await status(of: "/readyz") == 200 {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        throw ServiceProcessError(description: "instance on port \(port) never became ready: \(log)")
    }

    /// An API client of this instance on one connection of its own; close it with `shutdown`.
    func client() -> TestClient {
        let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(60)))
        client.connect()
        return client
    }

    /// Sends SIGTERM and leaves waiting for the exit to a thread of its own: the second or two a
    /// service takes to stop, waited on one of Swift concurrency's threads (two on CI), stalled
    /// every in-process service of the run meanwhile.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        Thread.detachNewThread { self.waitForExit() }
    }

    /// ``stop()``, returning once the process has exited.
    func stopAndWait() async throws {
        guard process.isRunning else { return }
        process.terminate()
        try await TestDatabase.onOwnThread { self.waitForExit() }
    }

    /// Blocks until the process has exited, ending it with SIGKILL after ten seconds.
    private func waitForExit() {
        for _ in 0..<100 where process.isRunning { usleep(100_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    var isRunning: Bool { process.isRunning }

    /// What the instance has written to its log so far.
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// The exit status, once the process has exited within `timeout`.
    func exitStatus(within timeout: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        return process.isRunning ? nil : process.terminationStatus
    }
}

/// Why an instance could not be run.
struct ServiceProcessError: Error, CustomStringConvertible {
    let description: String
}

extension TestAPI {
    /// A test API speaking to a live instance over `client`.
    init(_ client: TestClient) {
        self.init { uri, method, headers, body in
            var headers = headers
            headers[.connection] = "keep-alive"
            let response = try await client.execute(TestClient.Request(uri, method: method, authority: "localhost", headers: headers, body: body))
            return (Int(response.status.code), response.headers, Data((response.body ?? ByteBuffer()).readableBytesView))
        }
    }
}
