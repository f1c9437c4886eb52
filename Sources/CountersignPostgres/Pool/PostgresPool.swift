import Foundation
public import Logging
import NIOPosix
public import ServiceLifecycle
import Synchronization

/// A pool of libpq connections, run as a `ServiceLifecycle.Service`.
///
/// Usable as soon as it is created (run migrations before starting the `ServiceGroup`);
/// ``run()`` only waits for graceful shutdown or cancellation and then closes the pool.
/// Connections are opened lazily, at most ``PostgresConfiguration/poolSize``, so the
/// service starts while the database is down and recovers when it comes back.
///
/// Blocking libpq calls run only on the pool's own threads (one per connection), never on
/// an event loop or Swift's cooperative thread pool.
public final class PostgresPool: Service, Sendable {
    /// The configuration the pool was created with.
    public let configuration: PostgresConfiguration

    let logger: Logger
    private let threadPool: NIOThreadPool
    private let factory: ConnectionFactory
    private let metrics: PoolMetrics
    private let state: Mutex<State>
    private let connectionIDs = Atomic<Int>(0)
    private let databaseReachable = Atomic<Bool>(true)
    /// When a call last ended on a connection that is still good (the database answered it), in
    /// uptime nanoseconds; 0 before the first.
    private let lastAnsweredAt = Atomic<UInt64>(0)
    /// When the last "timed out waiting" notice was logged, and the timeouts since: a saturated
    /// pool times out a waiter per request, which the metric counts, and the log says once in a
    /// while.
    private let acquireTimeoutNotices = Mutex<(lastLogged: ContinuousClock.Instant?, unlogged: Int)>((nil, 0))
    static let acquireTimeoutNoticeInterval = Duration.seconds(10)

    struct Waiter {
        let continuation: CheckedContinuation<LibPQConnection?, any Error>
        var timeout: Task<Void, Never>?
    }

    struct State {
        var machine: PoolStateMachine<LibPQConnection, Waiter>
        var nextWaiterID: UInt64 = 0
        var drainContinuation: CheckedContinuation<Void, Never>?
        /// Closing stopped waiting for the calls still out (see `close()`).
        var drainGivenUp = false
        var closedContinuations: [CheckedContinuation<Void, Never>] = []
        var isClosed = false
    }

    /// Creates the pool and starts its threads. No connection is opened until one is needed.
    ///
    /// - Parameters:
    ///   - configuration: Where the database is and how the pool behaves.
    ///   - logger: Receives connection events (never SQL text or parameter values).
    public init(
        configuration: PostgresConfiguration,
        logger: Logger = Logger(label: "countersign.postgres")
    ) {
        precondition(configuration.poolSize > 0, "poolSize must be at least 1")
        self.configuration = configuration
        self.logger = logger
        self.factory = ConnectionFactory(configuration: configuration, logger: logger)
        self.metrics = PoolMetrics()
        self.state = Mutex(State(machine: PoolStateMachine(capacity: configuration.poolSize)))
        self.threadPool = NIOThreadPool(numberOfThreads: configuration.poolSize)
        self.threadPool.start()
        metrics.record(statistics)
        metrics.recordReachable(true)
    }

    deinit {
        let closed = state.withLock { $0.isClosed }
        if !closed {
            logger.debug("a PostgresPool was released without close(); its threads stop with it")
            // The thread pool asserts that it was shut down; do so without waiting.
            threadPool.shutdownGracefully { _ in }
        }
    }

    // MARK: - Using connections

    /// Runs `body` with a connection, on one of the pool's own threads, and returns its result.
    ///
    /// Waits (first come, first served) while all connections are busy; the wait ends with
    /// `CancellationError` as soon as the task is cancelled, and with
    /// ``PostgresError/Code/poolTimeout`` after ``PostgresConfiguration/acquireTimeout``.
    /// Fails with ``PostgresError/Code/connectionFailed`` if no connection can be opened and
    /// ``PostgresError/Code/poolClosed`` once the pool is closing. If the connection breaks
    /// during `body`, the failing call throws ``PostgresError/Code/connectionLost``; the
    /// body is not retried, and the connection is replaced before its next use.
    ///
    /// A transaction that `body` leaves open is rolled back.
    public func withConnection<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await withLease { _, facade in
            Result { try body(facade) }
        }
    }

    /// Runs `body` inside `BEGIN` ... `COMMIT` on one connection.
    ///
    /// If `body` throws, the transaction is rolled back and the error rethrown. If a
    /// statement failed inside `body` but `body` caught the error and returned, the
    /// transaction cannot commit: it is rolled back and
    /// ``PostgresError/Code/transactionRolledBack`` is thrown. A failing `COMMIT` (e.g. a
    /// serialization failure, see ``PostgresError/isSerializationFailure``) is thrown as is.
    public func withTransaction<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await withLease { connection, facade in
            Self.inTransaction(connection, facade, body)
        }
    }

    /// The pool's current numbers, for readiness checks and debugging.
    public var statistics: Statistics {
        state.withLock { Statistics($0.machine) }
    }

    /// How long ago a call last ended with the database answering it (`nil` before the first):
    /// a pool whose callers wait is busy while this stays short, and stuck once it grows.
    public var sinceLastAnswer: Duration? {
        let at = lastAnsweredAt.load(ordering: .relaxed)
        guard at > 0 else { return nil }
        return .nanoseconds(Int64(DispatchTime.now().uptimeNanoseconds &- at))
    }

    // MARK: - Leases

    private struct LeaseOutcome<T: Sendable>: Sendable {
        var connection: LibPQConnection?
        var openedDelta: Int
        /// nil if no connection had to be opened.
        var connectSucceeded: Bool?
        var result: Result<T, any Error>
    }

    private func withLease<T: Sendable>(
        _ work: @escaping @Sendable (LibPQConnection, PostgresConnection) -> Result<T, any Error>
    ) async throws -> T {
        try Task.checkCancellation()
        let leased = try await acquire()
        let outcome: LeaseOutcome<T>
        do {
            outcome = try await onThreadPool { [self] in
                Self.runLease(leased, factory: factory, nextID: { self.nextConnectionID() }, work)
            }
        } catch {
            // The thread pool is gone, which only happens after close: give the lease back untouched.
            release(leased, openedDelta: 0)
            throw error
        }
        if outcome.connection != nil { lastAnsweredAt.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed) }
        release(outcome.connection, openedDelta: outcome.openedDelta)
        if let connectSucceeded = outcome.connectSucceeded {
            noteConnectAttempt(succeeded: connectSucceeded, result: outcome.result)
        }
        return try outcome.result.get()
    }

    /// Logs a database outage once when it starts and once when it ends, not per call.
    private func noteConnectAttempt<T>(succeeded: Bool, result: Result<T, any Error>) {
        let wasReachable = databaseReachable.exchange(succeeded, ordering: .relaxed)
        metrics.recordReachable(succeeded)
        switch (wasReachable, succeeded) {
        case (true, false):
            if case .failure(let error) = result {
                logger.warning(
                    "cannot connect to the database; calls fail with connection_failed until it is back",
                    metadata: ["error": "\(String(reflecting: error))"]
                )
            }
        case (false, true):
            logger.notice("connected to the database again")
        case (false, false):
            if case .failure(let error) = result {
                logger.debug("still cannot connect to the database", metadata: ["error": "\(String(reflecting: error))"])
            }
        case (true, true):
            break
        }
    }

    private func nextConnectionID() -> Int {
        connectionIDs.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Runs on a pool thread: makes sure there is a live connection, runs `work`, tidies up.
    private static func runLease<T: Sendable>(
        _ leased: LibPQConnection?,
        factory: ConnectionFactory,
        nextID: () -> Int,
        _ work: (LibPQConnection, PostgresConnection) -> Result<T, any Error>
    ) -> LeaseOutcome<T> {
        var openedDelta = 0
        var connectSucceeded: Bool?
        var connection = leased
        if let idle = connection, !idle.isAliveAfterIdling() {
            idle.logger.debug("replacing a database connection that broke while idle")
            idle.finish()
            connection = nil
            openedDelta -= 1
        }
        if connection == nil {
            do {
                connection = try factory.connect(id: nextID())
                openedDelta += 1
            } catch {
                return LeaseOutcome(connection: nil, openedDelta: openedDelta, connectSucceeded: false, result: .failure(error))
            }
            connectSucceeded = true
        }
        let live = connection!
        let facade = PostgresConnection(live)
        let result = work(live, facade)
        facade.invalidate()
        live.restoreResponseTimeout()

        if live.isUsable {
            live.rollBackLeftoverTransaction()
        }
        guard live.isUsable else {
            live.logger.notice("closing a database connection that broke while in use")
            live.finish()
            return LeaseOutcome(
                connection: nil,
                openedDelta: openedDelta - 1,
                connectSucceeded: connectSucceeded,
                result: result
            )
        }
        return LeaseOutcome(connection: live, openedDelta: openedDelta, connectSucceeded: connectSucceeded, result: result)
    }

    private static func inTransaction<T>(
        _ connection: LibPQConnection,
        _ facade: PostgresConnection,
        _ body: (PostgresConnection) throws -> T
    ) -> Result<T, any Error> {
        do {
            try connection.execSimple("BEGIN")
        } catch {
            return .failure(error)
        }
        let value: T
        do {
            value = try body(facade)
        } catch {
            if connection.isUsable, connection.transactionState != .idle {
                _ = try? connection.execSimple("ROLLBACK")
            }
            return .failure(error)
        }
        switch connection.transactionState {
        case .idle:
            // The body ended the transaction itself; nothing left to commit.
            return .success(value)
        case .failedTransaction:
            _ = try? connection.execSimple("ROLLBACK")
            return .failure(
                PostgresError(.transactionRolledBack, reason: "a statement failed inside the transaction, so it was rolled back")
            )
        case .inTransaction, .active, .unknown:
            do {
                let commit = try connection.execSimple("COMMIT")
                // COMMIT of a failed transaction "succeeds" with the tag ROLLBACK.
                guard commit.commandStatus != "ROLLBACK" else {
                    return .failure(PostgresError(.transactionRolledBack, reason: "the server rolled the transaction back"))
                }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
    }

    /// Runs blocking work on the pool's threads. Not cancellable: once a lease is held, its
    /// job must run so that the lease comes back.
    private func onThreadPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            threadPool.submit { state in
                switch state {
                case .active:
                    continuation.resume(returning: work())
                case .cancelled:
                    continuation.resume(throwing: PostgresError(.poolClosed, reason: "the pool's threads have stopped"))
                }
            }
        }
    }

    // MARK: - Acquire and release

    private func acquire() async throws -> LibPQConnection? {
        // Fast path: a free lease, no continuation needed.
        let immediate = state.withLock { state in
            let result = state.machine.tryAcquire()
            metrics.record(Statistics(state.machine))
            return result
        }
        switch immediate {
        case .leased(let connection): return connection
        case .closed: throw PostgresError(.poolClosed, reason: "the pool is closed")
        case .mustWait: break
        }

        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let deadline = ContinuousClock.now.advanced(by: configuration.acquireTimeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<LibPQConnection?, any Error>) in
                let result = state.withLock { state in
                    let result = state.machine.acquire(id: id, waiter: Waiter(continuation: continuation))
                    metrics.record(Statistics(state.machine))
                    return result
                }
                switch result {
                case .leased(let connection):
                    continuation.resume(returning: connection)
                case .closed:
                    continuation.resume(throwing: PostgresError(.poolClosed, reason: "the pool is closed"))
                case .mustWait:
                    if Task.isCancelled {
                        // Cancelled before we were queued: the handler found nothing to remove.
                        failWaiter(id: id, with: CancellationError())
                    } else {
                        startTimeout(id: id, deadline: deadline)
                    }
                }
            }
        } onCancel: {
            failWaiter(id: id, with: CancellationError())
        }
    }

    private func startTimeout(id: UInt64, deadline: ContinuousClock.Instant) {
        let timeout = Task { [self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled else { return }
            if failWaiter(
                id: id,
                with: PostgresError(.poolTimeout, reason: "no connection became free within the acquire timeout")
            ) {
                metrics.recordAcquireTimeout()
                let now = ContinuousClock.now
                let timeouts: Int? = acquireTimeoutNotices.withLock { notices in
                    notices.unlogged += 1
                    if let last = notices.lastLogged, now - last < Self.acquireTimeoutNoticeInterval { return nil }
                    defer { notices = (now, 0) }
                    return notices.unlogged
                }
                if let timeouts {
                    logger.notice(
                        "timed out waiting for a database connection",
                        metadata: ["db.pool.size": "\(configuration.poolSize)", "db.pool.acquire_timeouts": "\(timeouts)"]
                    )
                }
            }
        }
        let stillWaiting = state.withLock { state in
            state.machine.updateWaiter(id: id) { $0.timeout = timeout }
        }
        if !stillWaiting {
            timeout.cancel()
        }
    }

    /// Removes a queued waiter and fails it; false if it had already been served.
    @discardableResult
    private func failWaiter(id: UInt64, with error: any Error) -> Bool {
        let waiter = state.withLock { state in
            let waiter = state.machine.removeWaiter(id: id)
            metrics.record(Statistics(state.machine))
            return waiter
        }
        guard let waiter else { return false }
        waiter.timeout?.cancel()
        waiter.continuation.resume(throwing: error)
        return true
    }

    private func release(_ connection: LibPQConnection?, openedDelta: Int) {
        let (action, drain) = state.withLock { state in
            let action = state.machine.release(connection, openedDelta: openedDelta)
            metrics.record(Statistics(state.machine))
            var drain: CheckedContinuation<Void, Never>?
            if case .drained = action {
                drain = state.drainContinuation
                state.drainContinuation = nil
            }
            return (action, drain)
        }
        switch action {
        case .none:
            break
        case .handOver(let waiter, let connection):
            waiter.timeout?.cancel()
            waiter.continuation.resume(returning: connection)
        case .drained:
            drain?.resume()
        }
    }

    // MARK: - Closing

    /// Closes the pool: new calls fail with ``PostgresError/Code/poolClosed`` at once,
    /// waiting callers too; calls already running finish; then every connection is closed
    /// and the threads stop. Returns when all that is done. Safe to call more than once.
    ///
    /// Each statement of a call waits at most ``PostgresConfiguration/responseTimeout`` for the
    /// server, but a call of several statements, or one that lifted the timeout, can take longer.
    /// Calls still out after one response timeout are left behind, on their threads, with a
    /// warning: shutting down must not wait for a database that does not answer. Without a
    /// response timeout (a `.zero` statement or connect timeout), closing waits for them.
    ///
    /// ``run()`` calls this on graceful shutdown; call it yourself only for a pool that is
    /// not run as a service (e.g. a one-off migration command).
    public func close() async {
        let begin = state.withLock { state in
            let begin = state.machine.beginClosing()
            metrics.record(Statistics(state.machine))
            return begin
        }
        guard let (failedWaiters, drained) = begin else {
            await waitUntilClosed()
            return
        }
        logger.debug("closing the database pool", metadata: ["db.pool.waiters_failed": "\(failedWaiters.count)"])
        for waiter in failedWaiters {
            waiter.timeout?.cancel()
            waiter.continuation.resume(throwing: PostgresError(.poolClosed, reason: "the pool is closing"))
        }

        // A timeout of `.zero` is none (`PostgresConfiguration`): then nothing bounds a call, and
        // one still out may be working rather than hung, so closing waits for it as for any other.
        let patience = configuration.responseTimeout
        var callsOut = 0
        if !drained {
            let givingUp = patience.map { patience in
                Task {
                    try? await Task.sleep(for: patience)
                    let continuation = state.withLock { state in
                        state.drainGivenUp = true
                        defer { state.drainContinuation = nil }
                        return state.drainContinuation
                    }
                    continuation?.resume()
                }
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let proceed = state.withLock { state in
                    if state.machine.leased == 0 || state.drainGivenUp { return true }
                    state.drainContinuation = continuation
                    return false
                }
                if proceed { continuation.resume() }
            }
            givingUp?.cancel()
            callsOut = state.withLock { $0.machine.leased }
        }

        let connections = state.withLock { state in
            let connections = state.machine.takeIdleConnections()
            // From here on, a call given up on that comes back keeps no connection: nothing would
            // take it from the idle list any more.
            state.machine.markClosed()
            metrics.record(Statistics(state.machine))
            return connections
        }
        if callsOut > 0 {
            // The threads the calls block could be all there are, so nothing more runs on them;
            // the idle connections are finished as they are dropped here (`deinit`).
            logger.warning(
                "closing the database pool with calls still out: the database does not answer",
                metadata: ["db.pool.calls_out": "\(callsOut)", "db.pool.waited": "\(patience ?? .zero)"]
            )
            threadPool.shutdownGracefully { _ in }
        } else {
            if !connections.isEmpty {
                // PQfinish writes to the socket: it belongs on the pool's threads too.
                _ = try? await onThreadPool {
                    for connection in connections { connection.finish() }
                }
            }
            do {
                try await threadPool.shutdownGracefully()
            } catch {
                logger.warning("the database pool's threads did not shut down cleanly", metadata: ["error": "\(error)"])
            }
        }

        let waiting = state.withLock { state in
            state.isClosed = true
            defer { state.closedContinuations.removeAll() }
            return state.closedContinuations
        }
        for continuation in waiting { continuation.resume() }
        logger.debug("closed the database pool", metadata: ["db.pool.connections_closed": "\(connections.count)"])
    }

    private func waitUntilClosed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let closed = state.withLock { state in
                if state.isClosed { return true }
                state.closedContinuations.append(continuation)
                return false
            }
            if closed { continuation.resume() }
        }
    }
}
