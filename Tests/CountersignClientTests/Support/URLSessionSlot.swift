import CountersignCore
import Foundation
import Testing

/// Lets only a few tests that drive a URLSession run at once.
///
/// On Linux, swift-corelibs-foundation's URLSession busy-waits on every new connection until its
/// first response arrives: the write source it registers while libcurl connects is never
/// removed when libcurl asks only to read, so it fires for as long as the socket is writable
/// (`_SocketSources.createSources`; libcurl 7.88 here). A request on a reused connection does not
/// spin. Every test here opens new connections (to its own Countersign, upstream or `countersign
/// fetch` child), so a hundred of them started together kept dozens of threads spinning on two
/// cores: the services and PostgreSQL under test starved for seconds, statements hit their
/// timeout and tests failed with 503s and fallbacks that had nothing to do with what they test.
/// Measured on the 2-core machine: up to 54 runnable threads and some failed runs without the
/// limit; at most 25, and no failure in 37 runs (12 beside a CPU hog), with it.
struct URLSessionSlot: TestTrait, SuiteTrait, TestScoping {
    /// Three per core: enough to overlap tests' waits (timeouts, delays) with other tests' work.
    static let slots = Turns(max(2, ProcessInfo.processInfo.activeProcessorCount * 3))

    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // A suite as a whole holds no slot: only its test cases do, so nesting cannot deadlock.
        guard testCase != nil else { return try await function() }
        try await Self.slots.run(function)
    }
}

extension Trait where Self == URLSessionSlot {
    /// Each test case of the suite waits for one of a few slots shared by every test that drives a
    /// URLSession (see ``URLSessionSlot``).
    static var urlSessionSlot: Self { URLSessionSlot() }
}
