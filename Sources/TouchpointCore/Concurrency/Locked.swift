#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// State guarded by a small mutex, for hot paths where an actor hop would cost too much.
///
/// `Synchronization.Mutex` needs iOS 18; this wraps `pthread_mutex_t`, which every platform
/// Touchpoint supports has.
///
/// ```swift
/// let counter = Locked(0)
/// counter.withLock { $0 += 1 }
/// ```
public final class Locked<State>: @unchecked Sendable {
    // Safe: `state` is only read or written between lock and unlock of `mutex`.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let state: UnsafeMutablePointer<State>

    /// Creates a lock around `initial`.
    public init(_ initial: State) {
        state = UnsafeMutablePointer.allocate(capacity: 1)
        state.initialize(to: initial)
        mutex = UnsafeMutablePointer.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }

    /// Runs `body` with exclusive access to the state if no other thread holds the lock now;
    /// returns nil at once, without running it, if one does (as `Mutex.withLockIfAvailable`).
    ///
    /// For a caller that does something else when it would have to wait, such as counting the
    /// wait before it takes the lock with ``withLock(_:)``.
    @inlinable
    public func withLockIfAvailable<Result>(_ body: (inout State) throws -> Result) rethrows -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }

    /// A copy of the state.
    public var value: State { withLock { $0 } }
}
