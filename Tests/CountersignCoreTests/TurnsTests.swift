import CountersignCore
import Synchronization
import Testing

@Suite("Turns")
struct TurnsTests {
    /// Runs that each wait for the test to let them finish, recording the order they started in.
    final class Gate: Sendable {
        private struct State {
            var held: [CheckedContinuation<Void, Never>] = []
            var started: [String] = []
        }
        private let state = Mutex(State())

        var started: [String] { state.withLock { $0.started } }
        var held: Int { state.withLock { $0.held.count } }

        func pass(_ name: String) async {
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    state.started.append(name)
                    state.held.append(continuation)
                }
            }
        }

        func releaseOne() {
            state.withLock { state in state.held.isEmpty ? nil : state.held.removeFirst() }?.resume()
        }
    }

    static func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition())
    }

    @Test func waitersRunOneAtATimeInTheOrderTheyCameAndTheQueueRefusesBeyondItsLength() async throws {
        let turns = Turns(1, maxWaiting: 2)
        let gate = Gate()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await turns.run { await gate.pass("first") } }
            try await Self.eventually { gate.held == 1 }
            for (name, waiting) in [("second", 1), ("third", 2)] {
                group.addTask { try await turns.run { await gate.pass(name) } }
                try await Self.eventually { turns.waiting == waiting }
            }
            await #expect(throws: Turns.QueueFull.self) { try await turns.run {} }

            for running in 1...3 {
                try await Self.eventually { gate.started.count == running }
                #expect(gate.held == 1)
                gate.releaseOne()
            }
            try await group.waitForAll()
        }
        #expect(gate.started == ["first", "second", "third"])
        #expect(turns.waiting == 0)
        #expect(try await turns.run { "free again" } == "free again")
    }
}
