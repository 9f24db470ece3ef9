import Foundation
import TouchpointCore

/// `GET /v1/query/lifecycle`: per day, week or month, the people who did an event for the first
/// time (new), also in the interval before (returning), after an interval without it
/// (resurrecting), and those who did it in the interval before but not in this one (dormant).
/// Read from the daily people (``DailyPeopleRollup``); "the first time" is within what the store
/// keeps.
public struct LifecycleQuery: Sendable, Hashable {
    /// The event counted.
    public var event: String
    /// Days, weeks or months.
    public var interval: AnalyticsInterval
    /// The intervals it touches are reported, whole.
    var range: AnalyticsRange
    /// The cohort whose people alone count (the `cohort` parameter).
    public var cohort: Int64?
}

/// The lifecycle per interval.
public struct LifecycleResult: Sendable, Hashable {
    /// One interval's groups.
    public struct Interval: Sendable, Hashable {
        /// Where the interval begins.
        public var start: Date
        public var new: Int
        public var returning: Int
        public var resurrecting: Int
        public var dormant: Int

        var json: JSONValue {
            .object([
                "start": .string(Timestamp.format(start)), "new": .int(new), "returning": .int(returning),
                "resurrecting": .int(resurrecting), "dormant": .int(dormant),
            ])
        }
    }

    /// What was asked.
    public var query: LifecycleQuery
    /// Oldest first.
    public var intervals: [Interval]
    /// Whether the daily people are still being built (``RetentionResult/partial``).
    public var partial: Bool

    var json: JSONValue {
        .object([
            "event": .string(query.event), "interval": .string(query.interval.rawValue),
            "from": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.from))),
            "to": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.to))),
            "timeZone": .string(query.range.calendar.identifier), "partial": .bool(partial),
            "intervals": .array(intervals.map(\.json)),
        ])
    }

    /// The days read: from the interval before the first the range touches to the end of its last
    /// (those before are read as one set, everyone who did it before).
    static func days(of query: LifecycleQuery) -> ClosedRange<Int64> {
        let calendar = query.range.calendar
        let intervals = query.range.intervals(query.interval)
        return calendar.firstDay(
            of: intervals.lowerBound - 1, query.interval)...(calendar.firstDay(
                of: intervals.upperBound + 1, query.interval) - 1)
    }

    static func compute(_ query: LifecycleQuery, people: DailyPeople, before: PersonSet, partial: Bool)
        -> LifecycleResult
    {
        let calendar = query.range.calendar
        let intervals = query.range.intervals(query.interval)
        let rows = PeopleInsights.lifecycle(
            people, before: before, calendar: calendar, interval: query.interval, first: intervals.lowerBound,
            last: intervals.upperBound)
        return LifecycleResult(
            query: query,
            intervals: rows.map { row in
                Interval(
                    start: Timestamp.date(milliseconds: calendar.start(of: row.index, query.interval)), new: row.new,
                    returning: row.returning, resurrecting: row.resurrecting, dormant: row.dormant)
            }, partial: partial)
    }
}
