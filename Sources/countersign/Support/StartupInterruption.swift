import Dispatch
import Foundation
import Logging
import Synchronization

/// Ctrl-C and SIGTERM while `dev` starts, before ServiceLifecycle takes them over for its
/// graceful shutdown.
///
/// Left to their default action they would kill `dev` in the middle of a step, with the cluster
/// it started (or was starting: `pg_ctl` goes on without it) still running. Instead the first
/// signal is remembered and ``check()``, called between steps, ends the start-up by throwing,
/// so that `dev`'s own clean-up stops the cluster. A second signal exits at once.
final class StartupInterruption {
    private final class Received: Sendable {
        let signal = Atomic<Int32>(0)
    }

    private let received = Received()
    private let sources: [any DispatchSourceSignal]

    init(logger: Logger) {
        let received = received
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if received.signal.exchange(number, ordering: .relaxed) != 0 { exit(128 + number) }
                logger.notice("interrupted: stopping once the current start-up step ends (again to quit at once)")
            }
            source.resume()
            return source
        }
    }

    /// Throws if a signal came since start-up began.
    func check() throws {
        let number = received.signal.load(ordering: .relaxed)
        guard number == 0 else { throw StartupError("interrupted during start-up (signal \(number))") }
    }

    /// Runs one start-up step; if it fails after a signal came, start-up ends as interrupted:
    /// the step may have failed of the interruption (Ctrl-C reaches `pg_ctl` too), and either
    /// way the operator asked to stop.
    func step<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            try check()
            throw error
        }
    }

    /// Hands the signals on to ServiceLifecycle, after a last ``check()``.
    func end() throws {
        for source in sources { source.cancel() }
        try check()
    }
}
