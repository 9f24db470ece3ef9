import Foundation

extension Backoff {
    /// How a ``Backoff``'s delays grow: first ceiling, growth factor, cap, floor, and the
    /// longest `Retry-After` that is obeyed.
    public struct Policy: Sendable, Hashable {
        /// The ceiling of the delay after the first failure, in seconds.
        public var initialDelay: TimeInterval
        /// How much the ceiling grows with each further consecutive failure.
        public var multiplier: Double
        /// The cap on the ceiling, in seconds.
        public var maximumDelay: TimeInterval
        /// The floor of every drawn delay, in seconds. 0 is pure full jitter; a positive floor
        /// bounds how many attempts can happen in a given time.
        public var minimumDelay: TimeInterval
        /// The longest server-requested delay that is obeyed, in seconds; a longer
        /// `Retry-After` is cut to this, so a misconfigured server cannot stall a client for days.
        public var maximumRetryAfter: TimeInterval

        /// Creates a policy. Values are made consistent: negative or non-finite numbers become
        /// 0 (or 1 for the multiplier), and the floor never exceeds the cap.
        /// - Parameters:
        ///   - initialDelay: the ceiling after the first failure (1 s by default).
        ///   - multiplier: growth per failure (2 by default).
        ///   - maximumDelay: the cap (5 minutes by default).
        ///   - minimumDelay: the floor of each delay (0 by default: full jitter).
        ///   - maximumRetryAfter: the longest `Retry-After` obeyed (1 hour by default).
        public init(
            initialDelay: TimeInterval = 1,
            multiplier: Double = 2,
            maximumDelay: TimeInterval = 300,
            minimumDelay: TimeInterval = 0,
            maximumRetryAfter: TimeInterval = 3600
        ) {
            func clean(_ value: Double) -> Double { value.isFinite && value > 0 ? value : 0 }
            self.maximumDelay = clean(maximumDelay)
            self.initialDelay = min(clean(initialDelay), self.maximumDelay)
            self.multiplier = multiplier.isFinite && multiplier >= 1 ? multiplier : 1
            self.minimumDelay = min(clean(minimumDelay), self.maximumDelay)
            self.maximumRetryAfter = clean(maximumRetryAfter)
        }

        /// The ceiling of the delay after `failures` consecutive failures:
        /// `min(maximumDelay, initialDelay × multiplier^(failures−1))`, 0 when `failures` is 0.
        public func ceiling(afterFailures failures: Int) -> TimeInterval {
            guard failures > 0 else { return 0 }
            let grown = initialDelay * pow(multiplier, Double(failures - 1))
            return grown.isFinite ? min(maximumDelay, grown) : maximumDelay
        }

        /// The range a delay is drawn from after `failures` consecutive failures (before any
        /// `Retry-After`): from ``minimumDelay`` to the ``ceiling(afterFailures:)`` (or just the
        /// floor, when the ceiling is lower).
        public func delayRange(afterFailures failures: Int) -> ClosedRange<TimeInterval> {
            minimumDelay...max(minimumDelay, ceiling(afterFailures: failures))
        }
    }
}
