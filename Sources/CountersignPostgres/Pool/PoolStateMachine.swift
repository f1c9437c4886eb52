/// The pool's bookkeeping, with no I/O, no locks and no clocks, so it can be tested alone.
///
/// A *lease* is the right to use one connection slot. There are at most `capacity` leases
/// out at once; a lease may come with an idle connection or with none, in which case its
/// holder opens one. Waiters are served first come, first served.
struct PoolStateMachine<Connection, Waiter> {
    enum Phase: Equatable {
        case running
        case draining
        case closed
    }

    enum AcquireResult {
        /// A lease: with an idle connection, or nil meaning "open one".
        case leased(Connection?)
        /// Nothing free: the waiter was queued (or, for `tryAcquire`, would have to be).
        case mustWait
        /// The pool is closing or closed.
        case closed
    }

    enum ReleaseAction {
        /// Nothing to do.
        case none
        /// Hand the lease (and the connection, if any) straight to this waiter.
        case handOver(to: Waiter, connection: Connection?)
        /// The pool is draining and this was the last lease: shutdown may proceed.
        case drained
    }

    let capacity: Int
    private(set) var phase: Phase = .running
    private(set) var idle: [Connection] = []
    /// Leases currently held.
    private(set) var leased = 0
    /// Connections currently open, idle or leased.
    private(set) var open = 0
    private var waiters: [(id: UInt64, waiter: Waiter)] = []

    init(capacity: Int) {
        precondition(capacity > 0, "a pool needs at least one connection")
        self.capacity = capacity
    }

    var waiterCount: Int { waiters.count }

    /// Takes a lease if one is free right now, without queueing.
    mutating func tryAcquire() -> AcquireResult {
        guard phase == .running else { return .closed }
        // Waiters come first: never overtake a queue.
        guard waiters.isEmpty else { return .mustWait }
        if let connection = idle.popLast() {
            leased += 1
            return .leased(connection)
        }
        if leased + idle.count < capacity {
            leased += 1
            return .leased(nil)
        }
        return .mustWait
    }

    /// Takes a lease, or queues `waiter` under `id` (`.mustWait`).
    mutating func acquire(id: UInt64, waiter: Waiter) -> AcquireResult {
        let result = tryAcquire()
        if case .mustWait = result {
            waiters.append((id, waiter))
        }
        return result
    }

    /// Removes a queued waiter (cancelled or timed out); nil if it was already served.
    mutating func removeWaiter(id: UInt64) -> Waiter? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).waiter
    }

    /// Changes a queued waiter in place; false if it is no longer queued.
    mutating func updateWaiter(id: UInt64, _ update: (inout Waiter) -> Void) -> Bool {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return false }
        update(&waiters[index].waiter)
        return true
    }

    /// Gives a lease back. `connection` is the connection to keep (nil if it was closed or
    /// never opened); `openedDelta` is how many connections the holder opened minus closed.
    mutating func release(_ connection: Connection?, openedDelta: Int) -> ReleaseAction {
        precondition(leased > 0, "released a lease that was not held")
        open += openedDelta
        switch phase {
        case .running:
            if !waiters.isEmpty {
                let next = waiters.removeFirst()
                return .handOver(to: next.waiter, connection: connection)
            }
            leased -= 1
            if let connection { idle.append(connection) }
            return .none
        case .draining:
            leased -= 1
            if let connection { idle.append(connection) }
            return leased == 0 ? .drained : .none
        case .closed:
            // A call the close gave up on came back: nothing takes idle connections any more, so
            // this one is not kept, and is finished as the caller drops it.
            leased -= 1
            if connection != nil { open -= 1 }
            return .none
        }
    }

    /// Starts closing: no new leases, every waiter is returned to be failed. `drained` tells
    /// whether no lease is out, so shutdown can proceed at once. Nil if already closing.
    mutating func beginClosing() -> (failedWaiters: [Waiter], drained: Bool)? {
        guard phase == .running else { return nil }
        phase = .draining
        let failed = waiters.map(\.waiter)
        waiters.removeAll()
        return (failed, leased == 0)
    }

    /// Once drained: takes the idle connections, to be closed.
    mutating func takeIdleConnections() -> [Connection] {
        defer { idle.removeAll() }
        open -= idle.count
        return idle
    }

    mutating func markClosed() {
        phase = .closed
    }
}
