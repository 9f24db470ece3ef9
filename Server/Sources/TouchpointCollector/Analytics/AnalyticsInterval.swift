import Foundation
import TouchpointCore

/// The width of an insight's intervals. Where each begins is the source's calendar's
/// (``SourceCalendar``): hours, days, weeks from Monday and months in the source's time zone.
public enum AnalyticsInterval: String, Sendable, Hashable, CaseIterable {
    case hour
    case day
    case week
    case month

    /// About how long one is, in milliseconds: for default ranges and the bound on how many
    /// intervals a range may hold, never for where one begins.
    var nominalMilliseconds: Int64 {
        switch self {
        case .hour: 3_600_000
        case .day: 86_400_000
        case .week: 604_800_000
        case .month: 2_629_746_000
        }
    }
}

/// A validated analytics range: both ends set, `from < to`, a bounded number of intervals, and
/// the calendar of the source it is asked of.
struct AnalyticsRange: Sendable, Hashable {
    var from: Int64
    var to: Int64
    /// Where the source's days begin.
    var calendar: SourceCalendar = .utc

    var timeRange: TimeRange {
        TimeRange(from: Timestamp.date(milliseconds: from), to: Timestamp.date(milliseconds: to))
    }

    /// The indexes of the first and last intervals the range touches.
    func intervals(_ interval: AnalyticsInterval) -> ClosedRange<Int64> {
        let first = calendar.index(of: from, interval)
        return first...max(first, calendar.index(of: to - 1, interval))
    }

    /// The local days the range touches: from the day holding `from` to the day holding `to - 1`.
    var days: ClosedRange<Int64> {
        let first = calendar.day(of: from)
        return first...max(first, calendar.day(of: to - 1))
    }

    /// Each interval the range touches, with its local days within the range's days.
    func dayRanges(_ interval: AnalyticsInterval) -> [(index: Int64, days: ClosedRange<Int64>)] {
        let days = self.days
        return intervals(interval).map { index in
            let first = max(days.lowerBound, calendar.firstDay(of: index, interval))
            let last = min(days.upperBound, calendar.firstDay(of: index + 1, interval) - 1)
            return (index, first...max(first, last))
        }
    }

    /// The range widened to whole local days (what an insight from the daily people counts).
    var wholeDays: AnalyticsRange {
        let days = self.days
        return AnalyticsRange(
            from: calendar.start(ofDay: days.lowerBound), to: calendar.start(ofDay: days.upperBound + 1),
            calendar: calendar)
    }

    /// The SQL for the index of the interval holding `events.timestamp` (``SourceCalendar/sqlIndex(_:_:from:to:)``).
    func sqlIndex(_ interval: AnalyticsInterval) -> String {
        calendar.sqlIndex("timestamp", interval, from: from, to: to)
    }
}

/// A property name that may be used in a breakdown or a step filter: letters, digits and `_`,
/// starting with a letter or `_`, at most 64 characters (it becomes part of a JSON path).
enum PropertyName {
    static func isValid(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 64 else { return false }
        func letter(_ scalar: Unicode.Scalar) -> Bool {
            (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || scalar == "_"
        }
        return letter(first) && name.unicodeScalars.allSatisfy { letter($0) || ($0 >= "0" && $0 <= "9") }
    }
}
