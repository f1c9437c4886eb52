public import CountersignStorage
public import Logging
public import ServiceLifecycle

/// Deletes the Digest nonce counts of nonces unused for `retention`, every `interval`. Servers
/// expire nonces within minutes (Apache: 5 minutes by default); a day keeps every count that can
/// still matter. Several instances may sweep at once.
public struct DigestNonceSweeper: Service {
    let nonceCounts: DigestNonceCountStore
    let interval: Duration
    let retention: Duration
    let logger: Logger

    public init(nonceCounts: DigestNonceCountStore, interval: Duration = .seconds(600), retention: Duration = .seconds(86_400), logger: Logger) {
        self.nonceCounts = nonceCounts
        self.interval = interval
        self.retention = retention
        self.logger = logger
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    // Sleeping first keeps the first sweep clear of the migrations applied at start.
                    try await Task.sleep(for: interval)
                    do {
                        try await nonceCounts.purge(unusedFor: Int(retention.components.seconds))
                    } catch {
                        logger.warning("digest nonce sweep failed", metadata: ["error": "\(error)"])
                    }
                }
            }
        } catch is CancellationError {
            // Shutting down.
        }
    }
}
