import Foundation
import TouchpointCore

/// `GET /v1/query/stickiness`: per week or month, how many people did an event on exactly 1, 2,
/// … n of its days. Read from the daily people (``DailyPeopleRollup``).
public struct StickinessQuery: Sendable, Hashable {
    /// The event counted.
    public var event: String
    /// Weeks or months.
    public var interval: AnalyticsInterval
    /// The intervals it touches are reported, whole.
    var range: AnalyticsRange
    /// The cohort whose people alone count (the `cohort` parameter).
    public var cohort: Int64?
}

/// Stickiness per interval.
public struct StickinessResult: Sendable, Hashable {
    /// One interval's distribution.
    public struct Interval: Sendable, Hashable {
        /// Where the interval begins.
        public var start: Date
        /// `people[k - 1]`: how many did the event on exactly k of its days (one entry per day of
        /// the interval: 7 for a week, 28 to 31 for a month).
        public var people: [Int]

        var json: JSONValue {
            .object([
                "start": .string(Timestamp.format(start)), "total": .int(people.reduce(0, +)),
                "days": .array(
                    people.enumerated().map { .object(["days": .int($0.offset + 1), "people": .int($0.element)]) }),
            ])
        }
    }

    /// What was asked.
    public var query: StickinessQuery
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

    /// The days of the intervals the query's range touches, whole.
    static func days(of query: StickinessQuery) -> ClosedRange<Int64> {
        let calendar = query.range.calendar
        let intervals = query.range.intervals(query.interval)
        return calendar.firstDay(
            of: intervals.lowerBound, query.interval)...(calendar.firstDay(
                of: intervals.upperBound + 1, query.interval) - 1)
    }

    static func compute(_ query: StickinessQuery, people: DailyPeople, partial: Bool) -> StickinessResult {
        let calendar = query.range.calendar
        let intervals = query.range.intervals(query.interval)
        let counts = PeopleInsights.stickiness(
            people, calendar: calendar, interval: query.interval, first: intervals.lowerBound,
            last: intervals.upperBound)
        return StickinessResult(
            query: query,
            intervals: zip(intervals, counts).map { index, people in
                Interval(start: Timestamp.date(milliseconds: calendar.start(of: index, query.interval)), people: people)
            }, partial: partial)
    }
}
