import Foundation
import TouchpointCore

/// A ``WallClock`` that only moves when told to, for timeouts, cooldowns and backoff in tests.
///
/// ```swift
/// let clock = ManualClock()
/// clock.advance(by: 31 * 60)  // past the session timeout
/// ```
public final class ManualClock: WallClock {
    private let current: Locked<Date>

    /// Creates a clock reading `start` (default: a fixed instant, 2026-01-01T00:00:00Z).
    public init(start: Date = Date(timeIntervalSince1970: 1_767_225_600)) { current = Locked(start) }

    public func now() -> Date { current.value }

    /// Moves the clock forward (or back, with a negative interval).
    public func advance(by interval: TimeInterval) { current.withLock { $0 += interval } }

    /// Sets the clock.
    public func set(_ date: Date) { current.withLock { $0 = date } }
}
