import Foundation

/// A token bucket that keeps requests under a ceiling per minute: up to ``burst`` requests at
/// once, then one every `60 / requestsPerMinute` seconds.
///
/// A plain value: ask ``take(at:)`` before each request and, when it refuses, wait until
/// ``nextToken(at:)``. Time comes from the caller, so it is tested with a manual clock.
struct RequestRateLimiter: Sendable, Hashable {
    /// The sustained ceiling.
    let requestsPerMinute: Double
    /// How many requests may go at once after a quiet period.
    let burst: Double
    private var tokens: Double
    private var updatedAt: Date?

    init(requestsPerMinute: Double, burst: Int) {
        self.requestsPerMinute = max(requestsPerMinute, 0.001)
        self.burst = Double(max(1, burst))
        tokens = self.burst
    }

    private var secondsPerToken: Double { 60 / requestsPerMinute }

    private mutating func refill(at now: Date) {
        if let updatedAt {
            let elapsed = max(0, now.timeIntervalSince(updatedAt))
            tokens = min(burst, tokens + elapsed / secondsPerToken)
        }
        updatedAt = now
    }

    /// Takes a token when one is available.
    /// - Returns: whether a request may go now.
    mutating func take(at now: Date) -> Bool {
        refill(at: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// When the next token will be available (now, when one is).
    func nextToken(at now: Date) -> Date {
        var copy = self
        copy.refill(at: now)
        guard copy.tokens < 1 else { return now }
        return now.addingTimeInterval((1 - copy.tokens) * secondsPerToken)
    }
}
