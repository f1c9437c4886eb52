extension PostgresPool {
    /// A snapshot of the pool's numbers.
    public struct Statistics: Sendable, Hashable, CustomStringConvertible {
        /// The most connections the pool opens (``PostgresConfiguration/poolSize``).
        public var size: Int
        /// Connections currently open, idle or in use.
        public var open: Int
        /// Connections lent out right now (including ones being opened for a caller).
        public var inUse: Int
        /// Open connections waiting in the pool.
        public var idle: Int
        /// Callers waiting for a connection.
        public var waiters: Int

        public init(size: Int, open: Int, inUse: Int, idle: Int, waiters: Int) {
            self.size = size
            self.open = open
            self.inUse = inUse
            self.idle = idle
            self.waiters = waiters
        }

        init(_ machine: PoolStateMachine<LibPQConnection, Waiter>) {
            self.init(
                size: machine.capacity,
                open: machine.open,
                inUse: machine.leased,
                idle: machine.idle.count,
                waiters: machine.waiterCount
            )
        }

        public var description: String {
            "size \(size), open \(open), in use \(inUse), idle \(idle), waiters \(waiters)"
        }
    }
}
