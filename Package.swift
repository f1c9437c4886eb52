// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// Tests import what they use; member-level import checks add nothing there but noise.
let testSwiftSettings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "countersign",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "countersign", targets: ["countersign"]),
        .library(name: "CountersignClient", targets: ["CountersignClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        // The domain: values, policy matching, decisions, RFC 7235 parsing, Digest math. No I/O.
        .target(name: "CountersignCore", swiftSettings: swiftSettings),

        // libpq, wrapped once.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .target(
            name: "CountersignPostgres",
            dependencies: [
                "CLibPQ",
                "CountersignCore",
                "CountersignCrypto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // OpenSSL 3, wrapped once.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "CountersignCrypto", dependencies: ["COpenSSL"], swiftSettings: swiftSettings),

        // The SQL of each feature's rows, and secrets sealed at rest: the only module that writes SQL.
        .target(
            name: "CountersignStorage",
            dependencies: [
                "CountersignCore",
                "CountersignCrypto",
                "CountersignPostgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // The application layer: decision state caches and the orchestration of core, storage and crypto.
        .target(
            name: "CountersignService",
            dependencies: [
                "CountersignCore",
                "CountersignCrypto",
                "CountersignPostgres",
                "CountersignStorage",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CountersignHTTP",
            dependencies: [
                "CountersignCore",
                "CountersignCrypto",
                "CountersignPostgres",
                "CountersignService",
                "CountersignStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "countersign",
            dependencies: [
                "CountersignClient",
                "CountersignCore",
                "CountersignCrypto",
                "CountersignHTTP",
                "CountersignPostgres",
                "CountersignStorage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // The SDK fleet apps link: depends on Foundation only, never on the server modules.
        .target(name: "CountersignClient", swiftSettings: swiftSettings),

        // libFuzzer harness for the challenge parser; scripts/fuzz builds it with -sanitize=fuzzer
        // -DCOUNTERSIGN_LIBFUZZER. A plain build is a corpus replayer, so it builds everywhere.
        .executableTarget(
            name: "ChallengeParserFuzzer",
            dependencies: ["CountersignCore"],
            path: "Tests/Fuzz/ChallengeParserFuzzer",
            swiftSettings: swiftSettings
        ),

        // Shared by the test targets: the throwaway database and fixtures.
        .target(
            name: "CountersignTestSupport",
            dependencies: ["CountersignCore", "CountersignPostgres", "CountersignCrypto", .product(name: "Logging", package: "swift-log")],
            path: "Tests/CountersignTestSupport",
            swiftSettings: swiftSettings
        ),
        // The core's tests borrow OpenSSL's hashes to check Digest test vectors; the core itself takes them injected.
        .testTarget(name: "CountersignCoreTests", dependencies: ["CountersignCore", "CountersignCrypto"], swiftSettings: testSwiftSettings),
        .testTarget(
            name: "CountersignCryptoTests",
            dependencies: ["CountersignCrypto", "CountersignTestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "CountersignPostgresTests",
            dependencies: ["CountersignPostgres", "CountersignTestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "CountersignStorageTests",
            dependencies: ["CountersignCore", "CountersignCrypto", "CountersignPostgres", "CountersignStorage", "CountersignTestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "CountersignHTTPTests",
            dependencies: [
                "CountersignHTTP",
                "CountersignPostgres",
                "CountersignStorage",
                "CountersignTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "CountersignClientTests",
            dependencies: [
                "CountersignClient",
                // The raw-response tests' Digest server checks headers with the core's parser and responder.
                "CountersignCore",
                "CountersignCrypto",
                "CountersignHTTP",
                "CountersignPostgres",
                "CountersignTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: testSwiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
