/// Waits until `condition` holds, checking it every few milliseconds: true as soon as it does,
/// false when `timeout` passes first.
///
/// For a test that waits for something to happen (a line printed, a request received). A test
/// that needs something *not* to happen drives time with ``ManualClock`` instead of waiting.
///
/// ```swift
/// #expect(await eventually { collector.storedCount == 100 })
/// ```
/// - Parameters:
///   - timeout: the most time to wait (30 s by default: generous, since CI machines are slow and
///     a passing test returns as soon as the condition holds).
///   - condition: checked until it returns true.
/// - Returns: whether the condition held before the timeout.
public func eventually(
    timeout: Duration = .seconds(30),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while true {
        if try await condition() { return true }
        if clock.now >= deadline { return false }
        // A poll, not a nap: the condition is checked again right after.
        try? await Task.sleep(for: .milliseconds(2))
    }
}
