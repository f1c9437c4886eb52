/// Runs `body` while calling `release` every 10 ms: tests that hold reads until they let them go
/// wait for their tasks this way, so that a read a late-scheduled task starts after one release
/// is let go too, instead of hanging the test.
func whileReleasing<T>(_ release: @escaping @Sendable () -> Void, _ body: () async throws -> T) async rethrows -> T {
    let releaser = Task {
        while !Task.isCancelled {
            release()
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
    defer { releaser.cancel() }
    return try await body()
}
