import Foundation

/// Runs blocking or CPU-heavy `body` on a thread of its own and suspends until it returns.
///
/// Swift's cooperative pool has one thread per core (two on the CI machine). A test that parses
/// a large log or waits for a child process on a pool thread starves every other test's tasks,
/// including the servers and dispatchers that time-sensitive tests wait for. Use this for such
/// work inside `async` tests.
///
/// ```swift
/// let stored = try await onOwnThread { try EventLogReader(directory: url).events(matching: query) }
/// ```
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        Thread {
            continuation.resume(with: Result { try body() })
        }.start()
    }
}

/// Runs non-throwing blocking `body` on a thread of its own, as the throwing variant does.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        Thread {
            continuation.resume(returning: body())
        }.start()
    }
}
