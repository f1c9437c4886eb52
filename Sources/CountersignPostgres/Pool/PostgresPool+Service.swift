import ServiceLifecycle

extension PostgresPool {
    /// Keeps the pool open until graceful shutdown or cancellation, then closes it
    /// (see ``close()``): run it in the same `ServiceGroup` as, and after, the services that
    /// use the database, so they drain first.
    public func run() async throws {
        // Returns on graceful shutdown, throws CancellationError on cancellation: both mean "close".
        try? await gracefulShutdown()
        await close()
    }
}
