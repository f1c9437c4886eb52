import Foundation
import Synchronization
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
/// Measured on the 2-core machine: up to 54 runnable threads and a failed run without the limit,
/// at most 12 and a shorter run with it.
struct URLSessionSlot: TestTrait, SuiteTrait, TestScoping {
    /// Three per core: enough to overlap tests' waits (timeouts, delays) with other tests' work.
    static let slots = AsyncSlots(max(2, ProcessInfo.processInfo.activeProcessorCount * 3))

    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // A suite as a whole holds no slot: only its test cases do, so nesting cannot deadlock.
        guard testCase != nil else { return try await function() }
        try await Self.slots.withSlot(function)
    }
}

extension Trait where Self == URLSessionSlot {
    /// Each test case of the suite waits for one of a few slots shared by every test that drives a
    /// URLSession (see ``URLSessionSlot``).
    static var urlSessionSlot: Self { URLSessionSlot() }
}

/// At most `count` holders at once; the others wait in the order they came.
final class AsyncSlots: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(_ count: Int) {
        state = Mutex(State(free: count))
    }

    func withSlot(_ body: @Sendable () async throws -> Void) async rethrows {
        await acquire()
        defer { release() }
        try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { continuation in
            let granted = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    private func release() {
        // A freed slot goes straight to the longest waiter, if any.
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
