/// Polls `condition` until it holds or `timeout` passes; returns whether it held. Tests wait
/// for a state this way rather than sleeping a guessed time, which a loaded machine outlasts.
/// The default is generous: a condition that holds ends the wait at once, and a whole suite
/// sharing two cores can keep a task from running for seconds.
public func eventually(
    timeout: Duration = .seconds(30),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}
