import Foundation
import Logging
import TouchpointCore

/// Limits guesses at a secret (the admin token, the dashboard sign-in) per client address.
///
/// An address may fail ``maximumFailures`` times within ``window``; after that every attempt from
/// it is refused with `429 Too Many Requests` and `Retry-After` until the window that began with
/// its first failure has passed. An attempt is counted when it *begins* and forgiven when it
/// succeeds, so a burst of parallel guesses cannot slip past the count before the first of them
/// fails. A right secret never resets the count of an address that is blocked: it is refused too.
final class FailedAttemptLimiter: Sendable {
    private struct Entry {
        var windowStart: Date
        var counted = 0
    }

    /// Failed (or unfinished) attempts an address may make within a window (default 10).
    let maximumFailures: Int
    /// How long an address's count lasts from its first failure (default 60 s).
    let window: TimeInterval
    private let clock: any WallClock
    private let entries = Locked([String: Entry]())
    private let logger: Logger

    init(maximumFailures: Int = 10, window: TimeInterval = 60, clock: any WallClock, logger: Logger) {
        self.maximumFailures = maximumFailures
        self.window = window
        self.clock = clock
        self.logger = logger
    }

    /// Runs `attempt` for `address` unless the address is blocked.
    /// - Parameters:
    ///   - secret: what is being guessed, for the refusal and the log (`admin token`).
    ///   - attempt: true when the secret was right.
    /// - Returns: whether the secret was right.
    /// - Throws: ``CollectorError`` `too_many_requests` (429, with the seconds to wait) when the
    ///   address has failed too often.
    func attempt(_ secret: String, from address: String, _ attempt: () -> Bool) throws(CollectorError) -> Bool {
        let now = clock.now()
        let wait = entries.withLock { entries -> Int? in
            // Many addresses (an attacker's, say): forget the ones whose window has passed, so
            // the table never holds more than the addresses of the last window.
            if entries.count >= Self.pruneThreshold {
                entries = entries.filter { now.timeIntervalSince($0.value.windowStart) < window }
            }
            var entry =
                entries[address].flatMap { now.timeIntervalSince($0.windowStart) < window ? $0 : nil }
                ?? Entry(windowStart: now)
            guard entry.counted < maximumFailures else {
                return max(1, Int((window - now.timeIntervalSince(entry.windowStart)).rounded(.up)))
            }
            entry.counted += 1
            entries[address] = entry
            return nil
        }
        if let wait {
            throw CollectorError(
                .tooManyRequests,
                "too many wrong attempts at the \(secret) from this address; try again in \(wait) s",
                retryAfter: wait)
        }
        let succeeded = attempt()
        if succeeded {
            entries.withLock { entries in
                guard var entry = entries[address] else { return }
                entry.counted -= 1
                entries[address] = entry.counted == 0 ? nil : entry
            }
        } else {
            logger.warning("wrong \(secret)", metadata: ["address": "\(address)"])
        }
        return succeeded
    }

    /// The table size at which an attempt first forgets the expired addresses.
    static let pruneThreshold = 4_096

    /// Addresses with a count in the table (for tests).
    var trackedAddresses: Int { entries.withLock { $0.count } }
}
