import ServiceLifecycle

extension PostgresPool {
    /// Keeps the pool open until graceful shutdown or cancellation, then closes it
    /// (see ``close()``).
    ///
    /// In a `ServiceGroup`, list the pool *before* the services that use it: the group shuts
    /// services down in reverse order, so they drain first and the pool closes last.
    public func run() async throws {
        // Returns on graceful shutdown, throws CancellationError on cancellation: both mean "close".
        try? await gracefulShutdown()
        await close()
    }
}
