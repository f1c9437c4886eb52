import CountersignTestSupport
import Foundation
import Testing

/// The `COUNTERSIGN_*` variables behind the executable's options.
@Suite("countersign environment variables")
struct CommandEnvironmentTests {
    @Test(
        "a value that does not parse stops the command instead of meaning the default",
        arguments: [
            ("COUNTERSIGN_PORT", "80x", "an integer"),
            ("COUNTERSIGN_DB_POOL_SIZE", "six", "an integer"),
            ("COUNTERSIGN_AUTO_MIGRATE", "nope", "true or false"),
            ("COUNTERSIGN_API_KEY_CACHE_SECONDS", "abc", "a number"),
            ("COUNTERSIGN_API_KEY_CACHE_SECONDS", "inf", "a number"),
        ])
    func unparsableValues(name: String, value: String, expected: String) async throws {
        let (status, output) = try await FetchCommandTests.run(["serve", "--port", "1"], environment: [name: value])
        #expect(status == 64, "\(output)")
        #expect(output.contains("\(name) must be \(expected)"), "\(output)")
    }

    @Test(
        "a negative number is a value out of range, not a missing one",
        arguments: [
            (["--retention-days", "-1"], "--retention-days (COUNTERSIGN_RETENTION_DAYS) must be between 0"),
            (["--port", "-1"], "--port (COUNTERSIGN_PORT) must be between 1 and 65535"),
            (["--pool-size", "-2"], "--pool-size (COUNTERSIGN_DB_POOL_SIZE) must be between 1 and 64"),
        ])
    func negativeValues(options: [String], expected: String) async throws {
        let (status, output) = try await FetchCommandTests.run(["serve"] + options, environment: [:])
        #expect(status == 64, "\(output)")
        #expect(output.contains(expected), "\(output)")
    }

    @Test("help shows whatever the variables hold", arguments: [["serve", "--help"], ["help", "dev"], ["rekey", "-h"]])
    func helpDespiteUnparsableValues(arguments: [String]) async throws {
        let (status, output) = try await FetchCommandTests.run(arguments, environment: ["COUNTERSIGN_PORT": "80x", "COUNTERSIGN_DB_POOL_SIZE": "six"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("USAGE:"), "\(output)")
    }

    @Test("dev's help names the variables only dev reads")
    func devHelpVariables() async throws {
        let (status, output) = try await FetchCommandTests.run(["dev", "--help"], environment: [:])
        #expect(status == 0, "\(output)")
        #expect(output.contains("COUNTERSIGN_DEV_DIR"), "\(output)")
        #expect(output.contains("COUNTERSIGN_PG_BINDIR"), "\(output)")
    }

    @Test("an option's value that reads help asks for no help")
    func helpAsAValue() async throws {
        let (status, output) = try await FetchCommandTests.run(["dev", "--data-dir", "help"], environment: ["COUNTERSIGN_PORT": "80x"])
        #expect(status == 64, "\(output)")
        #expect(output.contains("COUNTERSIGN_PORT must be an integer"), "\(output)")
    }

    @Test("rekey without the current master key says so with its own usage")
    func rekeyWithoutCurrentKey() async throws {
        let (status, output) = try await FetchCommandTests.run(["rekey", "--new-master-key-file", "/nonexistent/new.key"], environment: [:])
        #expect(status == 64, "\(output)")
        #expect(output.contains("give the current master key with --master-key-file or COUNTERSIGN_MASTER_KEY_FILE"), "\(output)")
        #expect(output.contains("Usage: countersign rekey"), "\(output)")
    }

    @Test("migrate takes only the options it uses")
    func migrateOptions() async throws {
        let (status, output) = try await FetchCommandTests.run(["migrate", "--decision-writers", "2"], environment: [:])
        #expect(status == 64, "\(output)")
        #expect(output.contains("Unknown option '--decision-writers'"), "\(output)")
    }

    @Test("parsable values are the options' defaults")
    func parsableValues() async throws {
        let (status, output) = try await FetchCommandTests.run(
            ["serve", "--help"],
            environment: ["COUNTERSIGN_PORT": "9191", "COUNTERSIGN_AUTO_MIGRATE": "off"]
        )
        #expect(status == 0, "\(output)")
        #expect(output.contains("9191"), "\(output)")
    }
}
