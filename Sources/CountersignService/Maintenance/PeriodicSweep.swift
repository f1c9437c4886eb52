public import CountersignStorage
import Foundation
public import Logging
public import ServiceLifecycle

/// A clean-up run every `interval` for as long as the service runs. Several instances may sweep
/// at once: each sweep is safe to run concurrently with itself.
public struct PeriodicSweep: Service, CustomStringConvertible {
    let name: String
    let interval: Duration
    /// The wait before the first sweep, when shorter than `interval`.
    let firstAfter: Duration
    let logger: Logger
    let sweep: @Sendable () async throws -> Void

    /// How ServiceLifecycle names it in its logs: the default printed the logger and closure too.
    public var description: String { "PeriodicSweep(\(name))" }

    public init(name: String, interval: Duration, firstAfter: Duration? = nil, logger: Logger, sweep: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.interval = interval
        self.firstAfter = min(firstAfter ?? interval, interval)
        self.logger = logger
        self.sweep = sweep
    }

    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                var pause = firstAfter
                while !Task.isCancelled {
                    // Sleeping first keeps the first sweep clear of the migrations applied at start.
                    try await Task.sleep(for: pause)
                    pause = interval
                    do {
                        try await sweep()
                    } catch is CancellationError {
                        throw CancellationError()
                    } catch {
                        logger.warning("\(name) failed", metadata: ["error": "\(error)"])
                    }
                }
            }
        } catch is CancellationError {
            // Shutting down.
        }
    }

    /// Records the expiry of sessions past their time and drops what they remembered.
    public static func expiredSessions(_ sessions: SessionStore, every interval: Duration, logger: Logger) -> PeriodicSweep {
        PeriodicSweep(name: "session sweep", interval: interval, logger: logger) {
            while try await sessions.expireDue() > 0, !Task.isCancelled {}
        }
    }

    /// Drops the passwords and identities opened more than `age` ago from this process's memory
    /// (see `OpenedSecrets`).
    public static func openedSecrets(_ secrets: SecretCache, _ identities: IdentityCache, olderThan age: Duration = .seconds(600), every interval: Duration = .seconds(60), logger: Logger) -> PeriodicSweep {
        PeriodicSweep(name: "opened secrets sweep", interval: interval, logger: logger) {
            secrets.forget(openedLongerThan: age)
            identities.forget(openedLongerThan: age)
        }
    }

    /// Deletes the Digest nonce counts of nonces unused for a day. Servers expire nonces within
    /// minutes (Apache: 5 minutes by default), so a day keeps every count that can still matter.
    public static func staleNonceCounts(_ nonceCounts: DigestNonceCountStore, every interval: Duration = .seconds(600), logger: Logger) -> PeriodicSweep {
        PeriodicSweep(name: "digest nonce sweep", interval: interval, logger: logger) {
            try await nonceCounts.purge(unusedFor: 86_400)
        }
    }

    /// Deletes the records of credentials removed a day ago or more. A cached tenant state is
    /// brought up to date from them only while it is an hour old at most
    /// (`DecisionStateCache.baseAge`); older ones are read whole.
    public static func credentialRemovals(_ credentials: CredentialStore, every interval: Duration = .seconds(3600), logger: Logger) -> PeriodicSweep {
        PeriodicSweep(name: "credential removals sweep", interval: interval, firstAfter: .seconds(120), logger: logger) {
            while try await credentials.purgeRemovals(olderThan: 86_400) > 0, !Task.isCancelled {}
        }
    }

    /// Deletes the decisions made, and the sessions ended, longer than `retention` ago, some
    /// thousands at a time, so that a long backlog never holds many locks at once.
    public static func retention(
        decisions: DecisionStore,
        sessions: SessionStore,
        keptFor retention: Duration,
        every interval: Duration = .seconds(3600),
        logger: Logger
    ) -> PeriodicSweep {
        // Soon after start too: instances that never live an hour (frequent deploys, autoscaled
        // pods) must still keep the retention.
        PeriodicSweep(name: "retention sweep", interval: interval, firstAfter: .seconds(120), logger: logger) {
            let cutoff = Date(timeIntervalSinceNow: -Double(retention.components.seconds))
            try await step("deleting old decisions") { while try await decisions.purge(madeBefore: cutoff) > 0, !Task.isCancelled {} }
            try await step("deleting ended sessions") { while try await sessions.purge(endedBefore: cutoff) > 0, !Task.isCancelled {} }
        }
    }

    /// A failure of one step of a sweep, named: "retention sweep failed" alone left an operator
    /// to guess which table was piling up.
    struct StepFailed: Error, CustomStringConvertible {
        var step: String
        var error: any Error
        var description: String { "\(step): \(error)" }
    }

    private static func step(_ name: String, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw StepFailed(step: name, error: error)
        }
    }
}
