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
        let (status, output) = try await FetchCommandTests.run(["serve", "--help"], environment: [name: value])
        #expect(status == 64, "\(output)")
        #expect(output.contains("\(name) must be \(expected)"), "\(output)")
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
