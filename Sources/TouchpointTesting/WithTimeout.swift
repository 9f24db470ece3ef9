/// Runs `operation` for at most `seconds`: its result, or nil when time ran out first.
///
/// When time runs out the operation's task is cancelled (an `AsyncStream` iteration then
/// ends), so a test waiting for something that never happens fails instead of hanging.
///
/// ```swift
/// let next = await withTimeout(5) { await resource.values().first { $0.version == 2 } }
/// #expect(next??.version == 2)
/// ```
/// - Parameters:
///   - seconds: the most time to wait.
///   - operation: the work; it should stop when cancelled.
/// - Returns: the operation's result, or nil on timeout.
public func withTimeout<T: Sendable>(
    _ seconds: Double,
    _ operation: @escaping @Sendable () async -> T
) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
