import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Says when a graceful shutdown (SIGTERM, SIGINT) begins: otherwise the log of a drain that
/// takes seconds ends with the last request, and an operator cannot tell a stop from a hang.
///
/// It watches the signals itself: a `ServiceGroup` tells its services of a shutdown one at a time,
/// the last listed first, and the HTTP server comes after every service of ours, so the group's
/// word reaches this service only once the drain is over. That word still makes the notice when
/// no signal came (a shutdown triggered in-process, as tests do).
struct ShutdownNotice: Service {
    let logger: Logger
    /// Without: the notice comes when the group's word does.
    let watchesSignals: Bool

    func run() async throws {
        let said = Atomic(false)
        let say = { @Sendable (cause: String) in
            guard !said.exchange(true, ordering: .relaxed) else { return }
            logger.notice("shutting down: finishing the requests in flight, then closing the database pool", metadata: ["cause": "\(cause)"])
        }
        let watcher = Task { [watchesSignals] in
            guard watchesSignals else { return }
            for await signal in await UnixSignalsSequence(trapping: .sigterm, .sigint) {
                say("\(signal)")
                return
            }
        }
        defer { watcher.cancel() }
        // Cancelled rather than shut down: the process is going, with nothing left to drain.
        guard (try? await gracefulShutdown()) != nil else { return }
        say("requested")
    }
}
