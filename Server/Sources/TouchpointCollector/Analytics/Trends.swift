import Foundation
import TouchpointCore

/// One series of `GET /v1/query/trends`: how often an event happened per interval (and how many
/// people did it, and its ``TrendMath``), of the events that pass its filters, optionally broken
/// down by one property's most frequent values plus "other". A trend of several series is a
/// ``TrendInsight``.
public struct TrendQuery: Sendable, Hashable {
    /// The event counted.
    public var event: String
    /// Hours, days, weeks or months.
    public var interval: AnalyticsInterval
    var range: AnalyticsRange
    /// The property to break down by, if any.
    public var breakdown: String?
    /// How many of the property's values get a series of their own (the rest are "other").
    public var topValues = 10
    /// What the series shows per interval.
    public var measure = TrendMath.total
    /// Only the events that pass every one of these count.
    public var filters: [PropertyFilter] = []

    /// Active people per point besides the counts: daily, weekly or monthly (`math=dau|wau|mau`).
    public var math: ActivePeople? {
        get {
            guard case .active(let people) = measure else { return nil }
            return people
        }
        set { measure = newValue.map(TrendMath.active) ?? .total }
    }
    /// The cohort whose people alone count (the `cohort` parameter).
    public var cohort: Int64?
    /// The cohort's people, once resolved (``CollectorQuery``); nil: everyone.
    var people: Set<Int64>?

    /// Whether its people are counted from its events: by hours (the daily people are by days), or
    /// when filters pick some of its events.
    var peopleFromEvents: Bool { interval == .hour || !filters.isEmpty }

    /// One series: `event`'s events per `interval` of `range`, showing `measure`.
    init(
        event: String, interval: AnalyticsInterval, range: AnalyticsRange, breakdown: String? = nil,
        measure: TrendMath = .total, filters: [PropertyFilter] = []
    ) {
        self.event = event
        self.interval = interval
        self.range = range
        self.breakdown = breakdown
        self.measure = measure
        self.filters = filters
    }
}

/// Which active people a trend's points carry: those who did the event in the day, 7 days or 30
/// days that end with the point's interval (or with the range).
public enum ActivePeople: String, Sendable, Hashable, CaseIterable {
    case dau, wau, mau

    /// The days a point looks back over.
    var days: Int64 {
        switch self {
        case .dau: 1
        case .wau: 7
        case .mau: 30
        }
    }
}

/// What a trend's series shows per interval: its events, its people, its active people
/// (``ActivePeople``), or the sum, average, median or 90th percentile of a numeric property over
/// its events (those whose property is a JSON number).
public enum TrendMath: Sendable, Hashable, CustomStringConvertible {
    /// Events.
    case total
    /// Distinct people (``PersonKeys``).
    case users
    /// The people active in the day, 7 or 30 days ending with each interval.
    case active(ActivePeople)
    case sum(String)
    case average(String)
    case median(String)
    /// The 90th percentile.
    case p90(String)

    /// The names of the `math` parameter, in order.
    static let names = ["total", "users", "dau", "wau", "mau", "sum", "avg", "median", "p90"]

    /// `math` named `name` of `property` (nil: an unknown name, or a property missing or given
    /// where it is not used).
    init?(name: String, property: String?) {
        switch (name, property) {
        case ("total", nil): self = .total
        case ("users", nil): self = .users
        case ("sum", let property?): self = .sum(property)
        case ("avg", let property?): self = .average(property)
        case ("median", let property?): self = .median(property)
        case ("p90", let property?): self = .p90(property)
        case (let name, nil):
            guard let people = ActivePeople(rawValue: name) else { return nil }
            self = .active(people)
        default: return nil
        }
    }

    /// The `math` parameter's name.
    public var name: String {
        switch self {
        case .total: "total"
        case .users: "users"
        case .active(let people): people.rawValue
        case .sum: "sum"
        case .average: "avg"
        case .median: "median"
        case .p90: "p90"
        }
    }

    /// The numeric property it aggregates (nil for total, users and active people).
    public var property: String? {
        switch self {
        case .total, .users, .active: nil
        case .sum(let property), .average(let property), .median(let property), .p90(let property): property
        }
    }

    /// `total`, `sum of amount`.
    public var description: String { property.map { "\(name) of \($0)" } ?? name }

    /// The value of a point: its events, its people, its active people, or its aggregate (a sum
    /// of nothing is 0).
    func value(of point: TrendPoint) -> Double? {
        switch self {
        case .total: Double(point.count)
        case .users: Double(point.users)
        case .active: point.active.map(Double.init)
        case .sum: point.aggregate ?? 0
        case .average, .median, .p90: point.aggregate
        }
    }
}

/// One series of a trend: a property value (or everything), its points, its total.
public struct TrendSeries: Sendable, Hashable {
    /// The breakdown value; nil for events without the property.
    public var value: String?
    /// Whether this series holds every value outside the top ones.
    public var isOther = false
    /// Counts per interval, every interval of the range (zeros included).
    public var points: [TrendPoint]
    /// The events of the whole range.
    public var total: Int { points.reduce(0) { $0 + $1.count } }

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "value": value.map(JSONValue.string) ?? .null, "total": .int(total),
            "points": .array(points.map(\.json)),
        ]
        if isOther { members["other"] = true }
        return .object(members)
    }
}

/// One interval of a trend.
public struct TrendPoint: Sendable, Hashable {
    /// The start of the interval.
    public var start: Date
    /// Events in it.
    public var count: Int
    /// Distinct people (a user id, or an anonymous id not merged into one).
    public var users: Int
    /// The sum, average, median or 90th percentile of the series' numeric property over its
    /// events (``TrendMath``); nil for the other maths, or when none of them has a number.
    public var aggregate: Double?
    /// With ``TrendQuery/math``: the people active in its window ending with this interval.
    public var active: Int?

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "start": .string(Timestamp.format(start)), "count": .int(count), "users": .int(users),
        ]
        if let aggregate { members["aggregate"] = .double(aggregate) }
        if let active { members["active"] = .int(active) }
        return .object(members)
    }
}

/// A trend's answer: every interval's totals and, with a breakdown, a series per value.
public struct TrendResult: Sendable, Hashable {
    /// What was asked.
    public var query: TrendQuery
    /// Every interval's events and people, whatever the breakdown.
    public var totals: [TrendPoint]
    /// With a breakdown: a series per top value, absent values, and "other"; largest first.
    public var series: [TrendSeries]
    /// Whether the daily people are still being built (``RetentionResult/partial``).
    public var partial = false

    var json: JSONValue {
        .object([
            "event": .string(query.event), "interval": .string(query.interval.rawValue),
            "from": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.from))),
            "to": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.to))),
            "breakdown": query.breakdown.map(JSONValue.string) ?? .null,
            "math": query.math.map { .string($0.rawValue) } ?? .null,
            "timeZone": .string(query.range.calendar.identifier), "partial": .bool(partial),
            "cohort": query.cohort.map { .int(Int($0)) } ?? .null,
            "totals": .array(totals.map(\.json)), "series": .array(series.map(\.json)),
        ])
    }

    /// Builds the answer from grouped counts: `rows` per (interval, value) and `totals` per
    /// interval, every interval of the range present.
    static func assemble(
        _ query: TrendQuery, totals: TrendTotals, rows: [TrendRow]
    ) -> TrendResult {
        let indexes = Array(query.range.intervals(query.interval))
        func point(_ index: Int64, _ value: TrendCount?) -> TrendPoint {
            TrendPoint(
                start: Timestamp.date(milliseconds: query.range.calendar.start(of: index, query.interval)),
                count: value?.count ?? 0, users: value?.users ?? 0, aggregate: value?.aggregate)
        }
        let totalPoints = indexes.map { point($0, totals[$0]) }
        guard query.breakdown != nil else {
            return TrendResult(query: query, totals: totalPoints, series: [])
        }
        // Values by their bytes, as the stores group them (``ExactText``).
        var byValue: [SeriesKey: [Int64: TrendCount]] = [:]
        for row in rows {
            byValue[SeriesKey(value: row.value.map({ ExactText($0) }), isOther: row.isOther), default: [:]][row.index] =
                TrendCount(count: row.count, users: row.users, aggregate: row.aggregate)
        }
        var series = byValue.map { key, counts in
            TrendSeries(value: key.value?.text, isOther: key.isOther, points: indexes.map { point($0, counts[$0]) })
        }
        // Largest first; "other" last; ties by value.
        series.sort { a, b in
            if a.isOther != b.isOther { return !a.isOther }
            if a.total != b.total { return a.total > b.total }
            return ExactText(a.value ?? "") < ExactText(b.value ?? "")
        }
        return TrendResult(query: query, totals: totalPoints, series: series)
    }

    private struct SeriesKey: Hashable {
        var value: ExactText?
        var isOther: Bool
    }
}

/// What one group of a trend's events holds: events, distinct people and the series'
/// aggregate (``TrendMath``).
struct TrendCount: Sendable, Hashable {
    var count: Int
    var users: Int
    var aggregate: Double?
}

/// Counts and distinct people per interval index, over all of a trend's events.
typealias TrendTotals = [Int64: TrendCount]

/// What one pass over a trend's events, grouped by a property's values, found.
struct TrendPass: Sendable {
    /// Counts and distinct people per interval and value (nil: absent); nil when there were more
    /// (interval, value) pairs than the pass groups.
    var rows: [TrendRow]?
    /// The totals, when the pass counted them.
    var totals: TrendTotals?
}

/// One grouped row of a trend query: an interval, a breakdown value (or "other"), its counts.
struct TrendRow: Sendable, Hashable {
    var index: Int64
    var value: String?
    var isOther: Bool
    var count: Int
    var users: Int
    /// The series' aggregate (``TrendMath``).
    var aggregate: Double?
}

extension TrendRow {
    init(index: Int64, value: String?, isOther: Bool, _ counted: TrendCount) {
        self.init(
            index: index, value: value, isOther: isOther, count: counted.count, users: counted.users,
            aggregate: counted.aggregate)
    }
}
