import CountersignCrypto
import CountersignTestSupport
import Foundation
import Testing

/// `countersign serve` processes given one master key or another, and `countersign rekey`.
@Suite("Master key rotation")
struct MasterKeyRotationTests {
    @Test func anInstanceGivenAnotherMasterKeyDoesNotStartEvenBeforeAnySecretIsStored() async throws {
        let databaseURL = try await TestDatabase.freshDatabase()
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let first = try await ServiceProcess.ready(databaseURL: databaseURL, keys: keys)
        defer { first.stop() }

        let otherKeys = try ServiceProcess.Keys()
        defer { otherKeys.remove() }
        let second = try ServiceProcess(databaseURL: databaseURL, keys: otherKeys)
        defer { second.stop() }
        await #expect(throws: ServiceProcessError.self) { try await second.waitUntilReady() }
        #expect(!second.isRunning)
        #expect(try String(contentsOf: second.logFile, encoding: .utf8).contains("the master key is not this database's"))
    }

    /// `countersign dev` on a database sealed under another master key (after a `rekey`, say) names
    /// the key file it read, and stops before its banner promises a service or it seals anything.
    @Test func devGivenAnotherMasterKeyNamesItsKeyFileBeforeItsBanner() async throws {
        let databaseURL = try await TestDatabase.freshDatabase()
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let instance = try await ServiceProcess.ready(databaseURL: databaseURL, keys: keys)
        defer { instance.stop() }
        try await instance.stopAndWait()

        let devDirectory = keys.directory.appendingPathComponent("dev").path
        var environment = ProcessInfo.processInfo.environment
        environment["COUNTERSIGN_MASTER_KEY_FILE"] = nil
        let dev = try await ChildProcess.runDetached(
            ServiceProcess.executable,
            ["dev", "--data-dir", devDirectory, "--database-url", databaseURL, "--port", String(try LoopbackPort.free()),
             "--migrations-dir", TestService.migrationsDirectory, "--log-level", "error"],
            environment: environment
        )
        #expect(dev.status == 1, "\(dev.outputText) \(dev.errorText)")
        #expect(dev.errorText.contains("the master key in \(devDirectory)/master.key is not this database's"), "\(dev.errorText)")
        #expect(!dev.outputText.contains("Countersign dev is starting"), "\(dev.outputText)")
        #expect(!FileManager.default.fileExists(atPath: devDirectory + "/demo-keys.json"), "the demo tenant was made under the wrong key")
    }

    @Test func rekeyMovesTheDatabaseToTheNewKeyAndTheOldOneNoLongerStarts() async throws {
        let databaseURL = try await TestDatabase.freshDatabase()
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let before = try await ServiceProcess.ready(databaseURL: databaseURL, keys: keys)
        let client = before.client()
        let api = TestAPI(client)
        let tenant = try await api.tenant()
        _ = try await api.credential(tenant, password: "kept-across-rotation")
        try await api.releasePolicy(tenant)

        let newKeyFile = keys.directory.appendingPathComponent("new.key").path
        try MasterKey.generate(toFile: newKeyFile)
        let rekey = ["rekey", "--database-url", databaseURL, "--master-key-file", keys.masterKeyFile, "--new-master-key-file", newKeyFile,
            "--migrations-dir", TestService.migrationsDirectory, "--log-level", "error"]
        let rotated = try await ChildProcess.runDetached(ServiceProcess.executable, rekey)
        #expect(rotated.status == 0, "\(rotated.errorText)")
        #expect(rotated.outputText.contains("sealed 1 tenant data key(s) under the new master key"), "\(rotated.outputText)")
        let again = try await ChildProcess.runDetached(ServiceProcess.executable, rekey)
        #expect(again.status == 0 && again.outputText.contains("nothing changed"), "\(again.outputText) \(again.errorText)")

        // The instance still given the old key stops saying it is ready (its answer is reused for a second).
        var readiness = try await api.call(.get, "/readyz")
        for _ in 0..<30 where readiness.status == 200 {
            try await Task.sleep(for: .milliseconds(100))
            readiness = try await api.call(.get, "/readyz")
        }
        #expect(readiness.status == 503 && readiness.errorCode == "not_ready", "\(readiness)")
        // The log says it, once however many probes ask.
        for _ in 0..<3 {
            try await Task.sleep(for: .milliseconds(1100))
            #expect(try await api.call(.get, "/readyz").status == 503)
        }
        #expect(before.log.components(separatedBy: "not ready: the master key is not this database's").count == 2, "\(before.log)")
        try await client.shutdown()
        try await before.stopAndWait()

        let stale = try ServiceProcess(databaseURL: databaseURL, keys: keys)
        defer { stale.stop() }
        await #expect(throws: ServiceProcessError.self) { try await stale.waitUntilReady() }

        try FileManager.default.removeItem(atPath: keys.masterKeyFile)
        try FileManager.default.copyItem(atPath: newKeyFile, toPath: keys.masterKeyFile)
        let after = try await ServiceProcess.ready(databaseURL: databaseURL, keys: keys)
        defer { after.stop() }
        let afterClient = after.client()
        defer { Task { try? await afterClient.shutdown() } }
        let afterAPI = TestAPI(afterClient)
        let session = try await afterAPI.session(tenant)
        #expect(try await afterAPI.decided(tenant, session: session).credentialPassword == "kept-across-rotation")
    }

    @Test func rekeyFromAKeyThatIsNotTheDatabasesChangesNothing() async throws {
        let databaseURL = try await TestDatabase.freshDatabase()
        let keys = try ServiceProcess.Keys()
        defer { keys.remove() }
        let instance = try await ServiceProcess.ready(databaseURL: databaseURL, keys: keys)
        defer { instance.stop() }

        let strangers = try ServiceProcess.Keys()
        defer { strangers.remove() }
        let newKeyFile = strangers.directory.appendingPathComponent("new.key").path
        try MasterKey.generate(toFile: newKeyFile)
        let refused = try await ChildProcess.runDetached(ServiceProcess.executable, [
            "rekey", "--database-url", databaseURL, "--master-key-file", strangers.masterKeyFile, "--new-master-key-file", newKeyFile,
            "--migrations-dir", TestService.migrationsDirectory, "--log-level", "error",
        ])
        #expect(refused.status == 1, "\(refused.outputText) \(refused.errorText)")
        #expect(refused.errorText.contains("the current master key given is not the one this database's data keys are sealed under"), "\(refused.errorText)")
        // The instance still runs on its key, and a new one with the same key starts.
        try await ServiceProcess.ready(databaseURL: databaseURL, keys: keys).stop()
    }
}
