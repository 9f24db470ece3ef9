import Foundation
import TouchpointCore

/// `GET /v1/query/retention`: people grouped by the interval of their first `start` event in the
/// range (their cohort), and the share of each cohort that did `return` in each later interval.
/// Read from the daily people (``DailyPeopleRollup``), so its cost follows people and days, not
/// events; intervals are the source's (``SourceCalendar``), whole ones.
public struct RetentionQuery: Sendable, Hashable {
    /// Days, weeks or months.
    public var interval: AnalyticsInterval
    /// The event that puts a person in a cohort (their first one in the range).
    public var startEvent: String
    /// The event that counts as coming back.
    public var returnEvent: String
    /// Cohorts are formed from first start events in this range.
    var range: AnalyticsRange
    /// How many intervals after the cohort's are reported (0 is the cohort's own).
    public var periods: Int
    /// The saved cohort whose people alone count (the `cohort` parameter).
    public var cohort: Int64?
    /// The cohort's people, once resolved (``CollectorQuery``); nil: everyone.
    var people: Set<Int64>?
}

/// One cohort's row of the retention triangle.
public struct RetentionCohort: Sendable, Hashable {
    /// The start of the cohort's interval.
    public var start: Date
    /// People whose first start event falls in it.
    public var size: Int
    /// Per period (0 = the cohort's own interval), how many of them did the return event; only
    /// periods that have begun by the time of the query.
    public var returned: [Int]

    /// `returned` over `size`.
    public var shares: [Double] { returned.map { size == 0 ? 0 : Double($0) / Double(size) } }

    var json: JSONValue {
        .object([
            "start": .string(Timestamp.format(start)), "size": .int(size),
            "returned": .array(returned.map { .int($0) }), "shares": .array(shares.map { .double($0) }),
        ])
    }
}

/// The retention triangle.
public struct RetentionResult: Sendable, Hashable {
    /// What was asked.
    public var query: RetentionQuery
    /// One row per interval of the range, oldest first.
    public var cohorts: [RetentionCohort]
    /// Whether the source's daily people are still being built from stored events (after an
    /// upgrade or a change of time zone): until then the answer counts only part of them.
    public var partial = false

    var json: JSONValue {
        .object([
            "interval": .string(query.interval.rawValue), "start": .string(query.startEvent),
            "return": .string(query.returnEvent),
            "from": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.from))),
            "to": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.to))),
            "periods": .int(query.periods), "timeZone": .string(query.range.calendar.identifier),
            "partial": .bool(partial), "cohort": query.cohort.map { .int(Int($0)) } ?? .null,
            "cohorts": .array(cohorts.map(\.json)),
        ])
    }

    /// The triangle from the daily people (``PeopleInsights/retention(start:returns:calendar:interval:first:last:periods:now:)``):
    /// cohorts are the whole intervals the range touches.
    static func compute(_ query: RetentionQuery, start: DailyPeople, returns: DailyPeople, now: Int64, partial: Bool)
        -> RetentionResult
    {
        let calendar = query.range.calendar
        let intervals = query.range.intervals(query.interval)
        let cohorts = PeopleInsights.retention(
            start: start, returns: returns, calendar: calendar, interval: query.interval,
            first: intervals.lowerBound, last: intervals.upperBound, periods: query.periods,
            now: calendar.index(of: now, query.interval))
        return RetentionResult(
            query: query,
            cohorts: cohorts.map { cohort in
                RetentionCohort(
                    start: Timestamp.date(milliseconds: calendar.start(of: cohort.index, query.interval)),
                    size: cohort.size, returned: cohort.returned)
            }, partial: partial)
    }
}
