public import Logging
import Foundation
import Metrics
import NIOPosix
public import ServiceLifecycle
import Synchronization

/// A notification a server sent to a channel the connection listens to (`NOTIFY`, `pg_notify`).
public struct PostgresNotification: Sendable, Equatable {
    public var channel: String
    public var payload: String
}

/// Listens to one channel on a connection of its own, outside the pool, and hands what it
/// hears to `handler`, as a `ServiceLifecycle.Service`.
///
/// A lost connection is opened again, with growing pauses, until the service stops.
/// Notifications sent while no connection listened are lost for good, so every time listening
/// (re)starts the handler hears ``Event/listening`` first: whatever it keeps up to date by
/// notifications may have changed meanwhile.
///
/// The connection blocks on a thread of its own, never on an event loop or Swift's cooperative
/// pool, and wakes every `wakeInterval` to see whether it should stop.
public final class PostgresListener: Service, Sendable {
    public enum Event: Sendable, Equatable {
        /// Listening has started, or started again after the connection was lost.
        case listening
        case notification(payload: String)
    }

    private let channel: String
    private let factory: ConnectionFactory
    private let logger: Logger
    private let handler: @Sendable (Event) -> Void
    private let stopRequested = Atomic<Bool>(false)
    /// 1 while listening, 0 otherwise: what it keeps up to date may be stale meanwhile.
    private let listening: Gauge
    private static let wakeInterval = Duration.milliseconds(250)
    /// How often a quiet connection is asked a question, so that one the network cut silently
    /// is found out and replaced.
    private static let probeInterval = Duration.seconds(30)
    private static let retryPauses: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(5)]

    /// - Parameter channel: A lowercase identifier (`[a-z_][a-z0-9_]*`): it is written into
    ///   `LISTEN`, which takes no parameters.
    public init(
        configuration: PostgresConfiguration,
        channel: String,
        logger: Logger,
        handler: @escaping @Sendable (Event) -> Void
    ) {
        precondition(Self.isPlainIdentifier(channel), "a channel name must be a plain lowercase identifier")
        self.channel = channel
        self.factory = ConnectionFactory(configuration: Self.ownConnection(configuration), logger: logger)
        self.logger = logger
        self.handler = handler
        self.listening = Gauge(label: "countersign_db_listening", dimensions: [("channel", channel)])
        listening.record(0)
    }

    /// The configuration of the listening connection: the service's, with a bound on every wait
    /// even where the service has none (a timeout of 0). The listener runs nothing long, and its
    /// probe must find a connection the network silently dropped, or a shutdown would wait on it
    /// for ever.
    static func ownConnection(_ configuration: PostgresConfiguration) -> PostgresConfiguration {
        var own = configuration
        if own.connectTimeout <= .zero { own.connectTimeout = .seconds(5) }
        if own.statementTimeout <= .zero { own.statementTimeout = .seconds(5) }
        return own
    }

    /// Listens until graceful shutdown or cancellation.
    public func run() async throws {
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    thread.submit { [self] _ in
                        listenUntilStopped()
                        continuation.resume()
                    }
                }
            } onGracefulShutdown: { [self] in
                stopRequested.store(true, ordering: .relaxed)
            }
        } onCancel: { [self] in
            stopRequested.store(true, ordering: .relaxed)
        }
        try? await thread.shutdownGracefully()
    }

    private var shouldStop: Bool { stopRequested.load(ordering: .relaxed) }

    private func listenUntilStopped() {
        // Attempts in a row that did not get to listen, since the last time it listened.
        var failures = 0
        var hasListened = false
        var warned = false
        while !shouldStop {
            var listened = false
            do {
                try listenOnce(listened: &listened, recovering: warned)
                return
            } catch {
                if listened {
                    failures = 0
                    hasListened = true
                    warned = false
                }
                // Before it ever listened, the first failure goes unsaid: a start-up that fails for
                // want of the database says so itself, and exits.
                if !warned, failures >= (hasListened ? 0 : 1) {
                    logger.warning(
                        "cannot listen for changes made through other instances; retrying",
                        metadata: ["db.channel": "\(channel)", "error": "\(error)"]
                    )
                    warned = true
                }
                pause(Self.retryPauses[min(failures, Self.retryPauses.count - 1)])
                failures += 1
            }
        }
    }

    /// Returns when asked to stop; throws when the connection could not be opened or was lost,
    /// with `listened` saying whether it got to listen first.
    private func listenOnce(listened: inout Bool, recovering: Bool) throws(PostgresError) {
        let connection = try factory.connect(id: 0)
        defer { connection.finish() }
        try connection.execSimple("SET application_name = 'countersign listener'; LISTEN \(channel)")
        listened = true
        listening.record(1)
        defer { listening.record(0) }
        if recovering {
            logger.notice("listening again for changes made through other instances", metadata: ["db.channel": "\(channel)"])
        }
        handler(.listening)
        var quietSince = ContinuousClock.now
        while !shouldStop {
            let received = try connection.notifications(waitingAtMost: Self.wakeInterval)
            for notification in received where notification.channel == channel {
                handler(.notification(payload: notification.payload))
            }
            if !received.isEmpty {
                quietSince = .now
            } else if ContinuousClock.now - quietSince > Self.probeInterval {
                try connection.execSimple("SELECT 1")
                quietSince = .now
            }
        }
    }

    private func pause(_ duration: Duration) {
        let end = ContinuousClock.now + duration
        while !shouldStop, ContinuousClock.now < end {
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    static func isPlainIdentifier(_ name: String) -> Bool {
        func isLetter(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
        guard let first = name.utf8.first, isLetter(first), name.utf8.count <= 63 else { return false }
        return name.utf8.allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
