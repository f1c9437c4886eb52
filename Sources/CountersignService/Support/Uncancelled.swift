/// Runs `cleanup` to its end even when the calling task is cancelled (its service group
/// stopping): the pool turns a cancelled task away before it takes a connection, and what undoes
/// a half-made answer (a release never sent, a claim never used) must still reach the database,
/// or a later request would judge it as if it had gone out.
func uncancelled<T: Sendable>(_ cleanup: @escaping @Sendable () async throws -> T) async throws -> T {
    // An unstructured task does not inherit the caller's cancellation.
    try await Task { try await cleanup() }.value
}
