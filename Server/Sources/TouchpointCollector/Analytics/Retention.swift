import Foundation
import TouchpointCore

/// `GET /v1/query/retention`: people grouped by the interval of their first `start` event in the
/// range (their cohort), and the share of each cohort that did `return` in each later interval.
public struct RetentionQuery: Sendable, Hashable {
    /// Days or weeks.
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

    var json: JSONValue {
        .object([
            "interval": .string(query.interval.rawValue), "start": .string(query.startEvent),
            "return": .string(query.returnEvent),
            "from": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.from))),
            "to": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.to))),
            "periods": .int(query.periods), "cohort": query.cohort.map { .int(Int($0)) } ?? .null,
            "cohorts": .array(cohorts.map(\.json)),
        ])
    }

    /// Builds the triangle from each person's first start event and the intervals in which they
    /// did the return event. Cohorts without people are listed with size 0, so the triangle has
    /// no gaps; a period that begins after `now` is left out.
    static func compute(
        _ query: RetentionQuery, firstStarts: [Int64: Int64], returns: [(person: Int64, index: Int64)], now: Int64
    ) -> RetentionResult {
        let interval = query.interval
        let firstCohort = interval.index(of: query.range.from)
        let lastCohort = interval.index(of: query.range.to - 1)
        guard firstCohort <= lastCohort else { return RetentionResult(query: query, cohorts: []) }
        var cohortOf: [Int64: Int64] = [:]
        var sizes: [Int64: Int] = [:]
        for (person, time) in firstStarts {
            let cohort = interval.index(of: time)
            cohortOf[person] = cohort
            sizes[cohort, default: 0] += 1
        }
        var returned: [Int64: [Int]] = [:]
        var seen = Set<ReturnKey>()
        for entry in returns {
            guard let cohort = cohortOf[entry.person] else { continue }
            let period = entry.index - cohort
            guard period >= 0, period <= Int64(query.periods),
                seen.insert(ReturnKey(person: entry.person, index: entry.index)).inserted
            else { continue }
            returned[cohort, default: Array(repeating: 0, count: query.periods + 1)][Int(period)] += 1
        }
        let nowIndex = interval.index(of: now)
        let cohorts = (firstCohort...lastCohort).map { cohort in
            let visible = max(0, min(query.periods, Int(nowIndex - cohort)) + 1)
            let counts = returned[cohort] ?? Array(repeating: 0, count: query.periods + 1)
            return RetentionCohort(
                start: Timestamp.date(milliseconds: interval.start(of: cohort)), size: sizes[cohort] ?? 0,
                returned: Array(counts.prefix(visible)))
        }
        return RetentionResult(query: query, cohorts: cohorts)
    }

    private struct ReturnKey: Hashable {
        var person: Int64
        var index: Int64
    }
}
