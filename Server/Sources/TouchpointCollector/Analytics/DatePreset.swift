import Foundation

/// A range an analyst picks by name (`date=` of the analytics queries): today, the last 7, 30 or
/// 90 days (today included), this month; each with the period before it, for comparisons.
///
/// Where a day and a month begin is the one decision of ``PresetCalendar``.
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

    /// The range at `now` (ms): whole days (or the month) up to the end of today (or of the month),
    /// and the period before it, in `calendar`.
    func ranges(now: Int64, calendar: PresetCalendar) -> (range: AnalyticsRange, previous: AnalyticsRange) {
        let today = calendar.startOfDay(containing: now)
        let tomorrow = calendar.adding(days: 1, to: today)
        let days: Int
        switch self {
        case .today: days = 1
        case .last7Days: days = 7
        case .last30Days: days = 30
        case .last90Days: days = 90
        case .thisMonth:
            let month = calendar.startOfMonth(containing: now)
            let next = calendar.adding(months: 1, to: month)
            return (
                AnalyticsRange(from: month, to: next),
                AnalyticsRange(from: calendar.adding(months: -1, to: month), to: month)
            )
        }
        let first = calendar.adding(days: 1 - days, to: today)
        return (
            AnalyticsRange(from: first, to: tomorrow),
            AnalyticsRange(from: calendar.adding(days: -days, to: first), to: first)
        )
    }
}

/// Where the date presets' days and months begin. UTC for every source today; the one place to
/// give a source's own time zone when sources have one.
public struct PresetCalendar: Sendable, Hashable {
    private let calendar: Calendar

    /// Days and months in `timeZone`.
    public init(timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// Days and months in UTC.
    public static let utc = PresetCalendar(timeZone: TimeZone(identifier: "UTC")!)

    /// The start of the day holding `time` (ms since 1970).
    func startOfDay(containing time: Int64) -> Int64 {
        milliseconds(calendar.startOfDay(for: date(time)))
    }

    /// The start of the month holding `time`.
    func startOfMonth(containing time: Int64) -> Int64 {
        let components = calendar.dateComponents([.year, .month], from: date(time))
        return milliseconds(calendar.date(from: components) ?? date(time))
    }

    /// `days` days after the start of a day (before, when negative).
    func adding(days: Int, to time: Int64) -> Int64 {
        milliseconds(calendar.date(byAdding: .day, value: days, to: date(time)) ?? date(time))
    }

    /// `months` months after the start of a month.
    func adding(months: Int, to time: Int64) -> Int64 {
        milliseconds(calendar.date(byAdding: .month, value: months, to: date(time)) ?? date(time))
    }

    private func date(_ time: Int64) -> Date { Date(timeIntervalSince1970: Double(time) / 1000) }

    private func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}
