import Foundation

/// A source of the current wall-clock time, so tests can move time by hand.
///
/// Timeouts, cooldowns, retention and backoff read the time from a `WallClock`; production code
/// uses ``SystemClock``, tests use `ManualClock` from `TouchpointTesting`.
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's wall clock.
public struct SystemClock: WallClock {
    public init() {}

    public func now() -> Date { Date() }
}
