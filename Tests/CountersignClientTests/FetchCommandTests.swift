import CountersignTestSupport
import Foundation
import Testing

/// `countersign fetch URL`, the built executable, against a real Countersign and a Basic server.
@Suite("countersign fetch", .urlSessionSlot)
struct FetchCommandTests {
    /// The `countersign` executable built beside the test bundle (`swift build --build-tests`
    /// builds both).
    static var executable: URL {
        get throws {
            var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            // Linux: .build/debug/<package>PackageTests.xctest; the executable is its sibling.
            if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
            let candidate = directory.appendingPathComponent("countersign")
            return try #require(FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil, "no countersign executable in \(directory.path)")
        }
    }

    /// Runs the executable to its end, on a thread of its own: the service it talks to runs in
    /// this process and needs Swift concurrency's threads meanwhile.
    static func run(_ arguments: [String], environment: [String: String]) async throws -> (status: Int32, output: String) {
        let result = try await ChildProcess.runDetached(
            try executable.path,
            arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        )
        return (result.status, result.outputText + result.errorText)
    }

    @Test(
        "a timeout it cannot wait for is a usage error, not a crash",
        arguments: [["--timeout", "0"], ["--timeout", "-1"], ["--timeout", "86401"], ["--timeout", "92233720368547758"], ["--timeout", "92233720368547758", "--raw"]]
    )
    func timeoutOutOfRange(options: [String]) async throws {
        let (status, output) = try await Self.run(["fetch", "http://127.0.0.1:1/report"] + options, environment: ["COUNTERSIGN_CLIENT_KEY": "csk_unused"])
        #expect(status == 64, "\(output)")
        #expect(output.contains("--timeout must be between 1 and 86400 seconds"), "\(output)")
    }

    /// `--timeout` bounds the whole fetch: URLSession's own timeout only bounds the wait between
    /// two bytes, which a server trickling its answer never reaches (found by review).
    @Test("--timeout ends a fetch whose answer trickles", arguments: [[], ["--raw"]])
    func timeoutEndsATricklingFetch(options: [String]) async throws {
        try await BasicAuthServer.run(user: "u", password: "p") { server in
            let start = ContinuousClock.now
            let (status, output) = try await Self.run(
                ["fetch", "http://127.0.0.1:\(server.port)/slow", "--service", "http://127.0.0.1:1", "--key", "csk_abcdefghjkmn_x", "--timeout", "2"] + options,
                environment: [:]
            )
            #expect(status == 1, "\(output)")
            #expect(output.contains("no answer within"), "\(output)")
            #expect(ContinuousClock.now - start < .seconds(15), "\(output)")
        }
    }

    @Test("a password written into the URL is never printed", arguments: [[], ["--raw"]])
    func passwordInURL(options: [String]) async throws {
        let (status, output) = try await Self.run(
            ["fetch", "http://alice:url-secret@127.0.0.1:1/report", "--service", "http://127.0.0.1:1", "--key", "csk_abcdefghjkmn_x", "--timeout", "10"] + options,
            environment: [:]
        )
        #expect(status == 1, "\(output)")
        #expect(output.contains("GET http://127.0.0.1:1/report"), "\(output)")
        #expect(output.contains("no response"), "\(output)")
        #expect(!output.contains("url-secret"), "\(output)")
    }

    @Test("fetches through the delegate and prints the status and decisions, never the password")
    func fetch() async throws {
        try await LiveCountersign.run { service in
            try await BasicAuthServer.run(user: EndToEndTests.account, password: "fetch-password") { server in
                let tenant = try await EndToEndTests.prepare(service, server: server, password: "fetch-password")
                let (status, output) = try await Self.run(
                    ["fetch", server.url.absoluteString, "--service", service.baseURL.absoluteString, "--client-id", "fetch-test"],
                    environment: ["COUNTERSIGN_CLIENT_KEY": tenant.clientKey]
                )
                #expect(status == 0, "\(output)")
                #expect(output.contains("status: 200"), "\(output)")
                #expect(output.contains("useCredential"), "\(output)")
                #expect(output.contains("rule: fleet-basic (Fleet Basic)"), "\(output)")
                #expect(output.contains("user: \(EndToEndTests.account)"), "\(output)")
                #expect(output.contains("accepted (200)"), "\(output)")
                #expect(output.contains("invalidated (finishTasks)"), "\(output)")
                #expect(!output.contains("fetch-password"), "\(output)")
                #expect(!output.contains(tenant.clientKey), "\(output)")
            }
        }
    }

    @Test("a refused credential: exit 1 with the 401 and the blocking decision")
    func refused() async throws {
        try await LiveCountersign.run { service in
            try await BasicAuthServer.run(user: EndToEndTests.account, password: "right") { server in
                let tenant = try await EndToEndTests.prepare(service, server: server, password: "wrong", maxFailures: 2)
                let (status, output) = try await Self.run(
                    ["fetch", server.url.absoluteString, "--service", service.baseURL.absoluteString, "--key", tenant.clientKey],
                    environment: [:]
                )
                #expect(status == 1, "\(output)")
                #expect(output.contains("status: 401"), "\(output)")
                #expect(output.contains("cancelAuthenticationChallenge"), "\(output)")
                #expect(output.contains("remaining attempts: 0"), "\(output)")
                // The refusals the retries counted, and the block they led to, are told.
                #expect(output.contains("counted the rejection of "), "\(output)")
                #expect(output.contains("blocked until: 20"), "\(output)")
                #expect(!output.contains("wrong"), "\(output)")
            }
        }
    }

    @Test("Countersign down: the fallback, and the task still ends")
    func serviceDown() async throws {
        try await BasicAuthServer.run(user: "u", password: "p") { server in
            let (status, output) = try await Self.run(
                ["fetch", server.url.absoluteString, "--service", "http://127.0.0.1:1", "--key", "csk_abcdefghjkmn_x", "--timeout", "20"],
                environment: [:]
            )
            #expect(status == 1, "\(output)")
            #expect(output.contains("fallback"), "\(output)")
            #expect(output.contains("status: 401"), "\(output)")
            #if canImport(FoundationNetworking)
            // The default fallback cannot go as it is on Linux; the output says what went instead.
            #expect(output.contains("fallback cancelAuthenticationChallenge (in place of performDefaultHandling"), "\(output)")
            #endif
        }
    }

    @Test("--raw: the 401 forwarded raw, the Digest header sent, 200; never the header or the password")
    func rawDigest() async throws {
        try await LiveCountersign.run { service in
            try await AuthUpstream.run(.digest, user: RawResponseEndToEndTests.account, password: "raw-fetch-password") { upstream in
                let tenant = try await RawResponseEndToEndTests.prepare(service, upstream, password: "raw-fetch-password")
                let (status, output) = try await Self.run(
                    ["fetch", upstream.baseURL + "/private", "--raw", "--service", service.baseURL.absoluteString, "--client-id", "raw-fetch"],
                    environment: ["COUNTERSIGN_CLIENT_KEY": tenant.clientKey]
                )
                #expect(status == 0, "\(output)")
                for line in [
                    "upstream: 401", "opened (client raw-fetch)", "useCredential  authorization  Digest SHA-256  rule: fleet-raw",
                    "sending Authorization: redacted", "upstream: 200", "accepted (200)", "invalidated (finishTasks)", "status: 200",
                ] {
                    #expect(output.contains(line), "\(line) in \(output)")
                }
                let sent = try #require(upstream.log.authorizations.last ?? nil)
                #expect(upstream.log.authorizations.count == 2 && sent.hasPrefix("Digest "))
                #expect(upstream.log.refusals.isEmpty)
                #expect(!output.contains(sent) && !output.contains("response=") && !output.contains("raw-fetch-password"), "\(output)")
                #expect(!output.contains(tenant.clientKey), "\(output)")
            }
        }
    }

    #if canImport(FoundationNetworking)
    /// On Linux a Digest 401 never reaches the delegate: the fetch ends with it, and says where to go.
    @Test("Linux, without --raw: a Digest 401 ends the fetch with a pointer to --raw")
    func digestWithoutRaw() async throws {
        try await AuthUpstream.run(.digest, user: "u", password: "p") { upstream in
            let (status, output) = try await Self.run(
                ["fetch", upstream.baseURL + "/private", "--service", "http://127.0.0.1:1", "--key", "csk_abcdefghjkmn_x", "--timeout", "10"],
                environment: [:]
            )
            #expect(status == 1, "\(output)")
            #expect(output.contains("status: 401"), "\(output)")
            #expect(output.contains("try --raw"), "\(output)")
        }
    }
    #endif

    @Test("--raw with a wrong stored password: each 401 forwarded, counted, blocked; exit 1")
    func rawRejected() async throws {
        try await LiveCountersign.run { service in
            try await AuthUpstream.run(.basic, user: RawResponseEndToEndTests.account, password: "right") { upstream in
                let tenant = try await RawResponseEndToEndTests.prepare(service, upstream, password: "wrong-raw-password", maxFailures: 2)
                let (status, output) = try await Self.run(
                    ["fetch", upstream.baseURL + "/private", "--raw", "--service", service.baseURL.absoluteString, "--key", tenant.clientKey],
                    environment: [:]
                )
                #expect(status == 1, "\(output)")
                #expect(output.components(separatedBy: "counted the rejection of").count == 3, "\(output)")
                #expect(output.contains("cancelAuthenticationChallenge  credential_blocked"), "\(output)")
                #expect(output.contains("status: 401"), "\(output)")
                // The upstream saw the request bare, then the stale header twice; none of it printed.
                let stale = "Basic " + Data("\(RawResponseEndToEndTests.account):wrong-raw-password".utf8).base64EncodedString()
                #expect(upstream.log.authorizations == [nil, stale, stale])
                #expect(!output.contains(stale.dropFirst(6)) && !output.contains("wrong-raw-password"), "\(output)")
                #expect(try await service.admin.counters(tenant).only?["failures"] as? Int == 2)
            }
        }
    }
}
