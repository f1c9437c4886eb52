import Metrics

/// The pool's swift-metrics instruments.
///
/// - `countersign_db_pool_connections{state="in_use"|"idle"}` (gauge)
/// - `countersign_db_pool_waiters` (gauge)
/// - `countersign_db_pool_acquire_timeouts_total` (counter)
/// - `countersign_db_reachable` (gauge): 1 while the last attempt to open a connection
///   succeeded, 0 from a failed one until one succeeds again
struct PoolMetrics: Sendable {
    let inUse = Gauge(label: "countersign_db_pool_connections", dimensions: [("state", "in_use")])
    let idle = Gauge(label: "countersign_db_pool_connections", dimensions: [("state", "idle")])
    let waiters = Gauge(label: "countersign_db_pool_waiters")
    let acquireTimeouts = Counter(label: "countersign_db_pool_acquire_timeouts_total")
    let reachable = Gauge(label: "countersign_db_reachable")

    func record(_ statistics: PostgresPool.Statistics) {
        inUse.record(statistics.inUse)
        idle.record(statistics.idle)
        waiters.record(statistics.waiters)
    }

    func recordReachable(_ isReachable: Bool) {
        reachable.record(isReachable ? 1 : 0)
    }

    func recordAcquireTimeout() {
        acquireTimeouts.increment()
    }
}
