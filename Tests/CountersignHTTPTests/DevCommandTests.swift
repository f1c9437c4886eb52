import CountersignTestSupport
import Foundation
import Testing

/// `countersign dev` on a database of the tests (`--database-url`, so it starts no cluster).
@Suite("countersign dev")
struct DevCommandTests {
    /// The banner says where the operator key the service takes is: with one configured, not
    /// the file dev generates for itself, whose key the service does not take.
    @Test func theBannerNamesTheConfiguredOperatorKeyFile() async throws {
        let databaseURL = try await TestDatabase.freshDatabase()
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let devDirectory = keys.directory.appendingPathComponent("dev").path
        let output = keys.directory.appendingPathComponent("dev.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServiceProcess.executable)
        process.arguments = [
            "dev", "--data-dir", devDirectory, "--database-url", databaseURL, "--port", String(try LoopbackPort.free()),
            "--operator-key-file", keys.operatorKeyFile, "--migrations-dir", TestService.migrationsDirectory, "--log-level", "error",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["COUNTERSIGN_MASTER_KEY_FILE"] = nil
        environment["COUNTERSIGN_OPERATOR_KEY"] = nil
        process.environment = environment
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }

        var printed = ""
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, process.isRunning, !printed.contains("operator key ") {
            try await Task.sleep(for: .milliseconds(100))
            printed = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        }
        printed = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(printed.contains("operator key  in \(keys.operatorKeyFile)\n"), "\(printed)")
        #expect(!printed.contains("\(devDirectory)/operator.key"), "\(printed)")
    }
}
