import Foundation

/// Exponential backoff with full jitter, capped, honouring a server's `Retry-After`: the one
/// retry schedule of the SDK (the delivery queue and ``RemoteResource`` both use it).
///
/// A plain value-type state machine: record each failure and success, and ask when the next
/// attempt may start. After the *n*-th consecutive failure the delay is drawn uniformly from
/// ``Policy/delayRange(afterFailures:)``: from the policy's floor up to
/// `min(maximumDelay, initialDelay × multiplier^(n−1))` ("full jitter", which spreads many
/// clients apart). A `Retry-After` longer than the drawn delay wins, up to
/// ``Policy/maximumRetryAfter``. Given a ``SeededRandomNumberGenerator`` the schedule is
/// reproducible.
///
/// ```swift
/// var backoff = Backoff(policy: .init(initialDelay: 1, maximumDelay: 60))
/// let delay = backoff.recordFailure(at: clock.now(), retryAfter: response.retryAfter(now: clock.now()))
/// // … later
/// if backoff.canAttempt(at: clock.now()) { try await send() }
/// backoff.recordSuccess()
/// ```
///
/// To survive a restart, persist ``failures`` and ``nextAttempt`` and pass them back to
/// ``init(policy:failures:nextAttempt:)``.
public struct Backoff: Sendable, Hashable {
    /// How delays grow.
    public var policy: Policy
    /// Consecutive failures since the last success.
    public private(set) var failures: Int
    /// The earliest time the next attempt may start; nil when no failure is pending.
    public private(set) var nextAttempt: Date?

    /// Creates a backoff, fresh or restored from saved state.
    /// - Parameters:
    ///   - policy: how delays grow.
    ///   - failures: consecutive failures so far (0 for a fresh start).
    ///   - nextAttempt: the earliest time of the next attempt, when restoring.
    public init(policy: Policy = Policy(), failures: Int = 0, nextAttempt: Date? = nil) {
        self.policy = policy
        self.failures = max(0, failures)
        self.nextAttempt = nextAttempt
    }

    /// Whether an attempt may start at `now`.
    public func canAttempt(at now: Date) -> Bool {
        guard let nextAttempt else { return true }
        return now >= nextAttempt
    }

    /// Seconds left before an attempt may start (0 when one may start now).
    public func remainingDelay(at now: Date) -> TimeInterval {
        guard let nextAttempt else { return 0 }
        return max(0, nextAttempt.timeIntervalSince(now))
    }

    /// Records a failed attempt and schedules the next one.
    /// - Parameters:
    ///   - now: when the attempt failed.
    ///   - retryAfter: the delay the server asked for (`Retry-After`), if any.
    ///   - random: the source of jitter; pass a ``SeededRandomNumberGenerator`` for a
    ///     reproducible schedule.
    /// - Returns: the delay before the next attempt, in seconds.
    @discardableResult
    public mutating func recordFailure(
        at now: Date,
        retryAfter: TimeInterval? = nil,
        using random: inout some RandomNumberGenerator
    ) -> TimeInterval {
        failures = failures == Int.max ? failures : failures + 1
        let range = policy.delayRange(afterFailures: failures)
        var delay =
            range.lowerBound == range.upperBound
            ? range.lowerBound : Double.random(in: range, using: &random)
        if let retryAfter, retryAfter.isFinite, retryAfter > delay {
            delay = max(delay, min(retryAfter, policy.maximumRetryAfter))
        }
        nextAttempt = now.addingTimeInterval(delay)
        return delay
    }

    /// Records a failed attempt with the system's random source for jitter.
    /// - Parameters:
    ///   - now: when the attempt failed.
    ///   - retryAfter: the delay the server asked for (`Retry-After`), if any.
    /// - Returns: the delay before the next attempt, in seconds.
    @discardableResult
    public mutating func recordFailure(at now: Date, retryAfter: TimeInterval? = nil) -> TimeInterval {
        var random = SystemRandomNumberGenerator()
        return recordFailure(at: now, retryAfter: retryAfter, using: &random)
    }

    /// Records a successful attempt: the failure count and the pending delay reset.
    public mutating func recordSuccess() {
        failures = 0
        nextAttempt = nil
    }
}
