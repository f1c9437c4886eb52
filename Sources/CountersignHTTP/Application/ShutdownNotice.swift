import Logging
import ServiceLifecycle

/// Says when a graceful shutdown (SIGTERM, SIGINT) begins: otherwise the log of a drain that
/// takes seconds ends with the last request, and an operator cannot tell a stop from a hang.
struct ShutdownNotice: Service {
    let logger: Logger

    func run() async throws {
        // Cancelled rather than shut down: the process is going, with nothing left to drain.
        guard (try? await gracefulShutdown()) != nil else { return }
        logger.notice("shutting down: finishing the requests in flight, then closing the database pool")
    }
}
