import Foundation

/// How many events happened in one minute (corrected timestamps, UTC minutes).
public struct MinuteCount: Sendable, Hashable {
    /// The start of the minute.
    public var minute: Date
    /// Events in it.
    public var count: Int

    /// Creates a count.
    public init(minute: Date, count: Int) {
        self.minute = minute
        self.count = count
    }
}
