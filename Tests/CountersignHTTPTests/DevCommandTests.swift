import CountersignPostgres
import CountersignTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `countersign dev` run as a process, its standard output and error collected in one file.
struct DevProcess {
    let process = Process()
    let directory: String
    let output: URL

    /// Starts `dev --data-dir <keys.directory>/dev` with `arguments`, without the master key or
    /// database the test process's environment may name.
    init(keys: ServiceProcess.Keys, _ arguments: [String], environment extra: [String: String] = [:]) throws {
        directory = keys.directory.appendingPathComponent("dev").path
        output = keys.directory.appendingPathComponent("dev.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: ServiceProcess.executable)
        process.arguments = ["dev", "--data-dir", directory, "--port", String(try LoopbackPort.free()), "--migrations-dir", TestService.migrationsDirectory] + arguments
        var environment = ProcessInfo.processInfo.environment
        for name in ["COUNTERSIGN_MASTER_KEY_FILE", "COUNTERSIGN_OPERATOR_KEY", "COUNTERSIGN_DATABASE_URL"] { environment[name] = nil }
        environment.merge(extra) { _, given in given }
        process.environment = environment
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var printed: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }

    /// Whether it ended, as the kernel sees it. Foundation notices only once every copy of the
    /// pipe it gave the child is closed, and a server the child started keeps one open.
    var hasEnded: Bool {
        guard process.isRunning,
            let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
        else { return true }
        // The state follows the command name, which is in parentheses.
        return stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).first == "Z"
    }

    /// What it printed once `text` shows (or it ended, or a minute passed).
    func waitUntilPrinted(_ text: String) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, process.isRunning, !printed.contains(text) {
            try await Task.sleep(for: .milliseconds(50))
        }
        return printed
    }

    /// Terminates it and waits (a while) until Foundation has its exit status too.
    func stop() async throws {
        if !hasEnded { process.terminate() }
        let deadline = ContinuousClock.now + .seconds(30)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
    }

    /// How it exited, once ``stop()`` saw it end.
    var exitStatus: Int32? {
        process.isRunning || process.terminationReason != .exit ? nil : process.terminationStatus
    }
}

@Suite("countersign dev")
struct DevCommandTests {
    /// The banner says where the operator key the service takes is: with one configured, not
    /// the file dev generates for itself, whose key the service does not take.
    @Test func theBannerNamesTheConfiguredOperatorKeyFile() async throws {
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let dev = try DevProcess(
            keys: keys,
            ["--database-url", try await TestDatabase.freshDatabase(), "--operator-key-file", keys.operatorKeyFile, "--log-level", "error"]
        )
        defer { if !dev.hasEnded { dev.process.terminate() } }

        _ = try await dev.waitUntilPrinted("operator key ")
        try await dev.stop()
        #expect(dev.printed.contains("operator key  in \(keys.operatorKeyFile)\n"), "\(dev.printed)")
        #expect(!dev.printed.contains("\(dev.directory)/operator.key"), "\(dev.printed)")

        // No whole key is printed; the banner's commands read them from the file.
        let keysFile = dev.directory + "/demo-keys.json"
        let saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: keysFile))) as? [String: Any])
        for name in ["adminKey", "clientKey"] {
            let key = try #require(saved[name] as? String)
            #expect(!dev.printed.contains(key), "\(name) printed: \(dev.printed)")
            let command = try #require(
                dev.printed.split(separator: "\n").first { $0.contains("\"\(name)\"") }.map { $0.trimmingCharacters(in: .whitespaces) },
                "\(dev.printed)"
            )
            let variable = name == "adminKey" ? "ADMIN_KEY" : "CLIENT_KEY"
            let read = try await ChildProcess.runDetached("/bin/sh", ["-c", command + "; printf %s \"$\(variable)\""]).outputText
            #expect(read == key, "\(command) gave \(read)")
        }
    }

    /// A directory the operator names is the one meant: without the programs, dev says so
    /// rather than take others it finds.
    @Test func aPostgresDirectoryNamedWithoutTheProgramsIsRefused() async throws {
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let dev = try DevProcess(keys: keys, ["--log-level", "error"], environment: ["COUNTERSIGN_PG_BINDIR": keys.directory.path])
        defer { if !dev.hasEnded { dev.process.terminate() } }
        let deadline = ContinuousClock.now + .seconds(60)
        while !dev.hasEnded, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        try await dev.stop()
        #expect(dev.exitStatus != nil && dev.exitStatus != 0, "\(dev.printed)")
        #expect(dev.printed.contains("COUNTERSIGN_PG_BINDIR is \(keys.directory.path), which holds no initdb and pg_ctl programs"), "\(dev.printed)")
    }

    /// Ctrl-C before the service runs (here while the cluster starts) must not leave the cluster
    /// dev started running behind it, as a signal's default action would.
    ///
    /// Every connection to the cluster waits `connectionDelay` seconds before it is served
    /// (`pre_auth_delay`, after our settings' include), so the start-up is still under way
    /// however fast the machine is. The signal comes once dev has printed `signalAfter`: while
    /// the cluster starts, or once it has started, in the demo tenant's step, whose connection
    /// then fails (8 s is past the 5 s connect timeout): dev still says it was interrupted, not
    /// the step's error.
    @Test(arguments: [(3, "starting the local PostgreSQL cluster"), (8, "started a local PostgreSQL cluster")])
    func anInterruptionDuringStartUpStopsTheCluster(connectionDelay: Int, signalAfter: String) async throws {
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        // Made beforehand, so that the signal comes while the cluster starts rather than in initdb.
        let cluster = LocalPostgresCluster(directory: keys.directory.appendingPathComponent("dev/postgres").path, options: .init(durable: false))
        try await TestDatabase.onOwnThread {
            _ = try cluster.start()
            try cluster.stop()
        }
        let settings = try #require(FileHandle(forWritingAtPath: cluster.dataDirectory + "/postgresql.conf"))
        try settings.seekToEnd()
        try settings.write(contentsOf: Data("\npre_auth_delay = \(connectionDelay)\n".utf8))
        try settings.close()
        let dev = try DevProcess(keys: keys, ["--no-fsync", "--log-level", "info"])
        defer {
            if !dev.hasEnded { dev.process.terminate() }
            if cluster.isRunning { cluster.stopInBackground() }
        }

        let printed = try await dev.waitUntilPrinted(signalAfter)
        #expect(printed.contains(signalAfter), "\(printed)")
        kill(dev.process.processIdentifier, SIGINT)
        let deadline = ContinuousClock.now + .seconds(60)
        while !dev.hasEnded, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(dev.hasEnded, "\(dev.printed)")
        // A `pg_ctl start` left behind would bring the server up a moment later.
        var leftRunning = false
        for _ in 0..<20 where !leftRunning {
            leftRunning = cluster.isRunning
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!leftRunning)
        if cluster.isRunning { try await cluster.stop() }
        try await dev.stop()
        #expect(dev.exitStatus == 1, "\(dev.printed)")
        #expect(dev.printed.contains("interrupted during start-up"), "\(dev.printed)")
        #expect(!dev.printed.contains("Countersign dev is starting"), "\(dev.printed)")
    }
}
