import Foundation
import Touchpoint

/// The demo's simulated time: each user's visits happen in the last hours, a few seconds
/// between taps, so the dashboard's charts and timelines look like a day's traffic rather than
/// one burst. Never later than the real time.
final class DemoClock: WallClock {
    private let current: Locked<Date>

    /// Starts at `start`.
    init(start: Date) { current = Locked(start) }

    func now() -> Date { min(current.value, Date()) }

    /// Moves time forward.
    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}
