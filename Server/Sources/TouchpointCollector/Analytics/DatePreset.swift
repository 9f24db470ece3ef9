import Foundation

/// A range an analyst picks by name (`date=` of the analytics queries): today, the last 7, 30 or
/// 90 days (today included), this month; each with the period before it, for comparisons.
///
/// A day and a month begin where the source's time zone says (``SourceCalendar``).
public enum DatePreset: String, Sendable, Hashable, CaseIterable {
    case today
    case last7Days = "7d"
    case last30Days = "30d"
    case last90Days = "90d"
    case thisMonth = "month"

    /// How the dashboard names it.
    public var label: String {
        switch self {
        case .today: "Today"
        case .last7Days: "Last 7 days"
        case .last30Days: "Last 30 days"
        case .last90Days: "Last 90 days"
        case .thisMonth: "This month"
        }
    }

    /// The interval a trend of this range shows when none is asked for.
    var defaultInterval: AnalyticsInterval { self == .today ? .hour : .day }

    /// The range at `now` (ms): whole local days (or the month) up to the end of today (or of the
    /// month), and the period before it, in the source's `calendar`.
    func ranges(now: Int64, calendar: SourceCalendar) -> (range: AnalyticsRange, previous: AnalyticsRange) {
        func range(days: ClosedRange<Int64>) -> AnalyticsRange {
            AnalyticsRange(
                from: calendar.start(ofDay: days.lowerBound), to: calendar.start(ofDay: days.upperBound + 1),
                calendar: calendar)
        }
        let today = calendar.day(of: now)
        let days: Int64
        switch self {
        case .today: days = 1
        case .last7Days: days = 7
        case .last30Days: days = 30
        case .last90Days: days = 90
        case .thisMonth:
            let month = calendar.index(of: now, .month)
            func monthDays(_ index: Int64) -> ClosedRange<Int64> {
                calendar.firstDay(of: index, .month)...(calendar.firstDay(of: index + 1, .month) - 1)
            }
            return (range(days: monthDays(month)), range(days: monthDays(month - 1)))
        }
        return (range(days: (today - days + 1)...today), range(days: (today - 2 * days + 1)...(today - days)))
    }
}
