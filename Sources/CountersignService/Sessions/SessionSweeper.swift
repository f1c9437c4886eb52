public import CountersignStorage
public import Logging
public import ServiceLifecycle

/// Records the expiry of sessions past their time and drops what they remembered, every
/// `interval`. Several instances may sweep at once: each session is expired once.
public struct SessionSweeper: Service {
    let sessions: SessionStore
    let interval: Duration
    let logger: Logger

    public init(sessions: SessionStore, interval: Duration = .seconds(30), logger: Logger) {
        self.sessions = sessions
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                // Waits first: at start the migrations that create the sessions table may
                // still be running.
                while !Task.isCancelled {
                    try await Task.sleep(for: interval)
                    await sweep()
                }
            }
        } catch is CancellationError {
            // Shutting down.
        }
    }

    func sweep() async {
        do {
            while try await sessions.expireDue() > 0, !Task.isCancelled {}
        } catch {
            logger.warning("session sweep failed", metadata: ["error": "\(error)"])
        }
    }
}
