import Foundation
import TouchpointCore

/// `GET /v1/query/trends`: one or more series on one chart (each a ``TrendQuery`` of the same
/// interval, range and breakdown, labelled A, B, …), optionally a formula over them, and the
/// period before for comparison.
public struct TrendInsight: Sendable, Hashable {
    /// One series and its letter.
    public struct Series: Sendable, Hashable {
        /// `A` to `J`.
        public var label: String
        public var query: TrendQuery
    }

    /// The series, in letter order (letters may be skipped).
    public var series: [Series]
    /// Arithmetic over the series, per interval.
    public var formula: TrendFormula?
    /// The period to compare with (nil: no comparison).
    var previous: AnalyticsRange?
    /// How the dashboard draws it.
    public var display = TrendDisplay.line

    /// Whether the period before is asked for.
    public var compares: Bool { previous != nil }
}

/// How the dashboard draws a trend.
public enum TrendDisplay: String, Sendable, Hashable, CaseIterable {
    /// A line per series.
    case line
    /// Bars side by side per interval.
    case bar
    /// One number per series: its value over the whole range.
    case number
}

/// What a ``TrendInsight`` found.
public struct TrendInsightResult: Sendable, Hashable {
    /// One line of the chart: a series, a breakdown value of one, or the formula.
    public struct Line: Sendable, Hashable {
        /// `A`, `B`, … or `formula`.
        public var label: String
        /// The breakdown value (nil: every event, or events without the property when
        /// ``isBreakdown``).
        public var value: String?
        /// Whether this is one breakdown value's line.
        public var isBreakdown = false
        /// Whether it holds every value outside the top ones.
        public var isOther = false
        /// The value per interval (events, people or the aggregate, as the series' math says; nil
        /// where there is none).
        public var values: [Double?]
        /// The value over the whole range (people counted once; nil where it cannot be told from
        /// a breakdown's lines: distinct people and averages do not add up).
        public var aggregate: Double?
        /// The same over the period before (when compared).
        public var previousValues: [Double?]?
        public var previousAggregate: Double?

        /// How the dashboard names it: `A`, `A · pro`, `B · other`.
        public var name: String {
            guard isBreakdown else { return label }
            return "\(label) · \(isOther ? "other" : value ?? "(not set)")"
        }

        var json: JSONValue {
            var members: [String: JSONValue] = [
                "label": .string(label), "values": .array(values.map(Self.number)), "aggregate": Self.number(aggregate),
            ]
            if isBreakdown {
                members["value"] = value.map(JSONValue.string) ?? .null
                if isOther { members["other"] = true }
            }
            if let previousValues {
                members["previous"] = .object([
                    "values": .array(previousValues.map(Self.number)), "aggregate": Self.number(previousAggregate),
                ])
            }
            return .object(members)
        }

        static func number(_ value: Double?) -> JSONValue {
            guard let value, value.isFinite else { return .null }
            if value == value.rounded(), abs(value) < 9e15 { return .int(Int(value)) }
            return .double(value)
        }
    }

    /// What was asked.
    public var insight: TrendInsight
    /// Each series' own answer (its totals and breakdown), in order.
    public var results: [TrendResult]
    /// Each series' answer over the period before, when compared.
    public var previousResults: [TrendResult]?
    /// The start of each interval.
    public var starts: [Date]
    /// The start of each interval of the period before (as many as there are, compared by position).
    public var previousStarts: [Date]?
    /// The lines: per series, its line and then its breakdown's lines; then the formula's.
    public var lines: [Line]

    /// The lines of series `label` (the formula's: `formula`).
    public func lines(of label: String) -> [Line] { lines.filter { $0.label == label } }

    var json: JSONValue {
        let first = results.first
        var members: [String: JSONValue] = first?.json.objectValue ?? [:]
        members["display"] = .string(insight.display.rawValue)
        members["partial"] = .bool(
            results.contains(where: \.partial) || (previousResults ?? []).contains(where: \.partial))
        members["formula"] = insight.formula.map { .string($0.text) } ?? .null
        members["intervals"] = .array(starts.map { .string(Timestamp.format($0)) })
        members["series"] = first?.json["series"] ?? .array([])
        members["results"] = .array(
            insight.series.map { series in
                var described = Self.describe(series)
                described["lines"] = .array(lines(of: series.label).map(\.json))
                return .object(described)
            }
                + (insight.formula.map { formula in
                    [
                        .object([
                            "label": "formula", "formula": .string(formula.text),
                            "lines": .array(lines(of: "formula").map(\.json)),
                        ])
                    ]
                } ?? []))
        if let previous = insight.previous, let previousStarts {
            members["previous"] = .object([
                "from": .string(Timestamp.format(Timestamp.date(milliseconds: previous.from))),
                "to": .string(Timestamp.format(Timestamp.date(milliseconds: previous.to))),
                "intervals": .array(previousStarts.map { .string(Timestamp.format($0)) }),
            ])
        }
        return .object(members)
    }

    private static func describe(_ series: TrendInsight.Series) -> [String: JSONValue] {
        [
            "label": .string(series.label), "event": .string(series.query.event),
            "math": .string(series.query.measure.name),
            "property": series.query.measure.property.map(JSONValue.string) ?? .null,
            "filters": .array(series.query.filters.map(\.json)),
        ]
    }

    /// The lines of `results` (and of `previous`, by position): per series its line over every
    /// event, then one per breakdown value; then the formula's, per breakdown value too.
    static func lines(
        _ insight: TrendInsight, results: [TrendResult], aggregates: [TrendCount],
        previous: [TrendResult]?, previousAggregates: [TrendCount]?
    ) -> [Line] {
        var lines: [Line] = []
        // Per series: its breakdown's lines by key, for the formula.
        var byKey: [String: [BreakdownKey: Line]] = [:]
        var keys: [BreakdownKey] = []
        for (index, series) in insight.series.enumerated() {
            let math = series.query.measure
            let result = results[index]
            var line = Line(
                label: series.label, values: result.totals.map(math.value(of:)),
                aggregate: aggregate(math, aggregates[index]))
            if let previous, let previousAggregates {
                line.previousValues = previous[index].totals.map(math.value(of:))
                line.previousAggregate = aggregate(math, previousAggregates[index])
            }
            lines.append(line)
            byKey[series.label, default: [:]][.all] = line
            for breakdown in result.series {
                let key = BreakdownKey(value: breakdown.value.map({ ExactText($0) }), isOther: breakdown.isOther)
                var valueLine = Line(
                    label: series.label, value: breakdown.value, isBreakdown: true, isOther: breakdown.isOther,
                    values: breakdown.points.map(math.value(of:)), aggregate: additive(math, breakdown.points))
                if let previous {
                    let before = previous[index].series.first {
                        $0.value.map({ ExactText($0) }) == key.value && $0.isOther == breakdown.isOther
                    }
                    let points =
                        before?.points ?? previous[index].totals.map { TrendPoint(start: $0.start, count: 0, users: 0) }
                    valueLine.previousValues = points.map(math.value(of:))
                    valueLine.previousAggregate = additive(math, points)
                }
                lines.append(valueLine)
                byKey[series.label, default: [:]][key] = valueLine
                if !keys.contains(key) { keys.append(key) }
            }
        }
        guard let formula = insight.formula else { return lines }
        for key in [BreakdownKey.all] + keys {
            let count = results.first?.totals.count ?? 0
            let previousCount = previous?.first?.totals.count
            func values(_ pick: (Line) -> [Double?]?, count: Int) -> [Double?] {
                (0..<count).map { position in
                    var values: [String: Double?] = [:]
                    for series in insight.series {
                        let line = byKey[series.label]?[key]
                        // A series without this breakdown value had no such events.
                        values[series.label] =
                            line.map { pick($0)?[position] ?? nil }
                            ?? series.query.measure.value(of: TrendPoint(start: Date(), count: 0, users: 0))
                    }
                    return formula.evaluate(values)
                }
            }
            func aggregate(_ pick: (Line) -> Double?) -> Double? {
                var values: [String: Double?] = [:]
                for series in insight.series { values[series.label] = byKey[series.label]?[key].flatMap(pick) }
                return formula.evaluate(values)
            }
            var line = Line(
                label: "formula", value: key.value?.text, isBreakdown: key != .all, isOther: key.isOther,
                values: values({ $0.values }, count: count), aggregate: aggregate(\.aggregate))
            if let previousCount {
                line.previousValues = values({ $0.previousValues }, count: previousCount)
                line.previousAggregate = aggregate(\.previousAggregate)
            }
            lines.append(line)
        }
        return lines
    }

    /// The value of a series over its whole range from its aggregate (``CollectorQuery``'s pass
    /// over the range): events, people, or the aggregate (a sum of nothing is 0).
    private static func aggregate(_ math: TrendMath, _ counted: TrendCount) -> Double? {
        math.value(
            of: TrendPoint(start: Date(), count: counted.count, users: counted.users, aggregate: counted.aggregate))
    }

    /// A breakdown line's value over the range where its points add up to it (events and sums).
    private static func additive(_ math: TrendMath, _ points: [TrendPoint]) -> Double? {
        switch math {
        case .total: Double(points.reduce(0) { $0 + $1.count })
        case .sum: points.reduce(0) { $0 + ($1.aggregate ?? 0) }
        case .users, .active, .average, .median, .p90: nil
        }
    }

    /// A breakdown value, or every event.
    private struct BreakdownKey: Hashable {
        var value: ExactText?
        var isOther: Bool
        var isAll = false

        static let all = BreakdownKey(value: nil, isOther: false, isAll: true)
    }
}
