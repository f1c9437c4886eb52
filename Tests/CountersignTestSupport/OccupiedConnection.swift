public import CountersignPostgres

/// The only connection of a pool, held unanswered until ``release()``, however slow the machine:
/// the holder waits for an advisory lock that a connection of another pool (`gate`) holds. What a
/// database that hangs, or a pool with every connection busy, looks like to its other callers.
public struct OccupiedConnection: Sendable {
    let holder: Task<Void, any Error>
    let gate: PostgresPool

    /// Occupies the one connection of `pool`, whose database is `connectionString`.
    public init(_ pool: PostgresPool, database connectionString: String) async throws {
        gate = PostgresPool(configuration: TestDatabase.configuration(connectionString, poolSize: 1))
        try await gate.withConnection { try $0.simpleQuery("SELECT pg_advisory_lock(4242)") }
        holder = Task {
            try await pool.withConnection { try $0.simpleQuery("SELECT pg_advisory_lock(4242); SELECT pg_advisory_unlock(4242)") }
        }
        guard await eventually({ pool.statistics.inUse == 1 }) else {
            try await release()
            throw NeverTaken()
        }
    }

    /// Lets the holder finish, and waits until it has.
    public func release() async throws {
        try await gate.withConnection { try $0.simpleQuery("SELECT pg_advisory_unlock(4242)") }
        try await holder.value
        await gate.close()
    }

    /// The pool never lent its connection to the holder.
    struct NeverTaken: Error, CustomStringConvertible {
        var description: String { "the pool's connection was never taken" }
    }
}
