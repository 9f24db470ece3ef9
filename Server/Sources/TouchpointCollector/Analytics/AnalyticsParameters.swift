import Foundation
import TouchpointCore

/// Reads the analytics queries' parameters and refuses bad ones with a 400 that names the
/// parameter and what was expected. Shared by the query API and the dashboard's forms.
struct AnalyticsParameters {
    /// The query's parameters, by name (nil when absent; an empty value counts as absent).
    let value: (String) -> String?
    /// The current time, in ms since 1970.
    let now: Int64
    /// Every parameter's name (for refusing unknown ones where a grammar has names of its own:
    /// the trends' series and filters).
    var names: [String] = []
    /// Where the source's days begin: every range carries it, and the date presets' days
    /// (``DatePreset``) are its days.
    let calendar: SourceCalendar

    init(
        now: Date, calendar: SourceCalendar = .utc, names: [String] = [], _ value: @escaping (String) -> String?
    ) {
        self.value = { name in value(name).flatMap { $0.isEmpty ? nil : $0 } }
        self.now = Timestamp.milliseconds(now)
        self.calendar = calendar
        self.names = names.filter { value($0).map { !$0.isEmpty } ?? false }
    }

    static let maximumIntervals = 1000

    /// The first series of ``trends()``.
    func trend() throws(CollectorError) -> TrendQuery {
        try trends().series[0].query
    }

    func funnel() throws(CollectorError) -> FunnelQuery {
        let text = try required("steps", limit: 2000)
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard (2...10).contains(parts.count) else {
            throw invalid("steps", "expected 2 to 10 comma-separated steps, got \(parts.count)")
        }
        var steps: [FunnelStep] = []
        for (index, part) in parts.enumerated() {
            do {
                steps.append(try FunnelStep.parse(part))
            } catch {
                throw invalid("steps", "step \(index + 1): \(error.message)")
            }
        }
        let window = try duration("window", default: 86_400_000)
        let range = try self.range(defaultSpan: 30 * 86_400_000, interval: nil)
        var query = FunnelQuery(steps: steps, window: window, range: range)
        query.filters = try filters("where")
        query.breakdown = try property("breakdown")
        query.cohort = try cohort()
        return query
    }

    func retention() throws(CollectorError) -> RetentionQuery {
        let interval = try self.interval(allowed: [.day, .week, .month], default: .day)
        let start = try required("start")
        let returnEvent = value("return") ?? start
        var periods = interval == .day ? 14 : 12
        if let text = value("periods") {
            guard let parsed = Int(text), (1...60).contains(parsed) else {
                throw invalid("periods", "expected 1 to 60, got \"\(text)\"")
            }
            periods = parsed
        }
        let range = try self.range(
            defaultSpan: Int64(periods) * interval.nominalMilliseconds, interval: interval)
        var query = RetentionQuery(
            interval: interval, startEvent: start, returnEvent: returnEvent, range: range, periods: periods)
        query.cohort = try cohort()
        return query
    }

    func paths() throws(CollectorError) -> PathQuery {
        let start = value("start")
        let end = value("end")
        if start != nil, end != nil { throw invalid("end", "give start or end, not both") }
        let direction: PathQuery.Direction = end == nil ? .after : .before
        guard start != nil || end != nil else { throw invalid("start", "missing (or give end)") }
        let event = try required(direction.parameter)
        let steps = try number("steps", in: 1...5, default: 3)
        let top = try number("top", in: 1...20, default: 5)
        let window = try duration("window", default: 86_400_000)
        let range = try self.range(defaultSpan: 30 * 86_400_000, interval: nil)
        var exclude: [String] = []
        if let text = value("exclude") {
            guard text.utf8.count <= 2000 else { throw invalid("exclude", "longer than 2000 bytes") }
            exclude = text.split(separator: ",").map(String.init)
            if exclude.contains(event) {
                throw invalid("exclude", "cannot leave out \(event), which the paths go from")
            }
        }
        return PathQuery(
            event: event, direction: direction, steps: steps, window: window, range: range, top: top,
            exclude: exclude, cohort: try cohort())
    }

    /// `GET /v1/query/stickiness`: `event`, `interval` week (default) or month, `from`, `to`
    /// (default: the last 12 weeks or months).
    func stickiness() throws(CollectorError) -> StickinessQuery {
        let event = try required("event")
        let interval = try self.interval(allowed: [.week, .month], default: .week)
        let range = try self.range(defaultSpan: 12 * interval.nominalMilliseconds, interval: interval)
        var query = StickinessQuery(event: event, interval: interval, range: range)
        query.cohort = try cohort()
        return query
    }

    /// `GET /v1/query/lifecycle`: `event`, `interval` day, week (default) or month, `from`, `to`
    /// (default: the last 30 days, 12 weeks or 12 months).
    func lifecycle() throws(CollectorError) -> LifecycleQuery {
        let event = try required("event")
        let interval = try self.interval(allowed: [.day, .week, .month], default: .week)
        let span = (interval == .day ? 30 : 12) * interval.nominalMilliseconds
        let range = try self.range(defaultSpan: span, interval: interval)
        var query = LifecycleQuery(event: event, interval: interval, range: range)
        query.cohort = try cohort()
        return query
    }

    /// `event` (optional) and `limit` (1 to 10,000 event names, 1,000 when absent) of
    /// `GET /v1/query/definitions`.
    func definitions() throws(CollectorError) -> (event: String?, limit: Int) {
        let event = value("event") == nil ? nil : try required("event")
        var limit = 1000
        if let text = value("limit") {
            guard let parsed = Int(text), (1...10_000).contains(parsed) else {
                throw invalid("limit", "expected 1 to 10000, got \"\(text)\"")
            }
            limit = parsed
        }
        return (event, limit)
    }

    /// An optional range for the export: both ends optional.
    func exportRange() throws(CollectorError) -> TimeRange {
        var range = TimeRange()
        if let from = try time("from") { range.from = Timestamp.date(milliseconds: from) }
        if let to = try time("to") { range.to = Timestamp.date(milliseconds: to) }
        if let from = range.from, let to = range.to, from >= to {
            throw invalid("from", "must be before to")
        }
        return range
    }

    // MARK: Pieces

    func required(_ name: String, limit: Int = 200) throws(CollectorError) -> String {
        guard let text = value(name) else { throw invalid(name, "missing") }
        guard text.utf8.count <= limit else { throw invalid(name, "longer than \(limit) bytes") }
        return text
    }

    /// An optional property name (for a breakdown).
    func property(_ name: String) throws(CollectorError) -> String? {
        guard let property = value(name) else { return nil }
        guard PropertyName.isValid(property) else {
            throw invalid(name, "expected a property name (letters, digits and _, at most 64), got \"\(property)\"")
        }
        return property
    }

    /// Optional filters separated by `;` (`plan=pro;amount>10`).
    func filters(_ name: String) throws(CollectorError) -> [PropertyFilter] {
        guard let text = value(name) else { return [] }
        guard text.utf8.count <= 2000 else { throw invalid(name, "longer than 2000 bytes") }
        do {
            return try PropertyFilter.parseList(text)
        } catch {
            throw invalid(name, error.message)
        }
    }

    /// The optional `cohort`: a saved cohort's number (whether it exists is the query's to say).
    func cohort() throws(CollectorError) -> Int64? {
        guard let text = value("cohort") else { return nil }
        guard let id = Int64(text), id > 0 else {
            throw invalid("cohort", "expected a cohort's number, got \"\(text)\"")
        }
        return id
    }

    /// An optional whole number in `bounds`.
    func number(_ name: String, in bounds: ClosedRange<Int>, default fallback: Int) throws(CollectorError) -> Int {
        guard let text = value(name) else { return fallback }
        guard let parsed = Int(text), bounds.contains(parsed) else {
            throw invalid(name, "expected \(bounds.lowerBound) to \(bounds.upperBound), got \"\(text)\"")
        }
        return parsed
    }

    /// An optional duration such as `30m` (at most 90 days), in milliseconds.
    func duration(_ name: String, default fallback: Int64) throws(CollectorError) -> Int64 {
        guard let text = value(name) else { return fallback }
        guard let parsed = Self.duration(text), parsed > 0, parsed <= 90 * 86_400_000 else {
            throw invalid(name, "expected a duration such as 30m, 12h or 7d (at most 90d), got \"\(text)\"")
        }
        return parsed
    }

    func interval(allowed: [AnalyticsInterval], default fallback: AnalyticsInterval)
        throws(CollectorError) -> AnalyticsInterval
    {
        guard let text = value("interval") else { return fallback }
        guard let interval = AnalyticsInterval(rawValue: text), allowed.contains(interval) else {
            throw invalid(
                "interval", "expected \(allowed.map(\.rawValue).joined(separator: ", ")), got \"\(text)\"")
        }
        return interval
    }

    func time(_ name: String) throws(CollectorError) -> Int64? {
        guard let text = value(name) else { return nil }
        guard let date = Timestamp.parse(QueryParameters.timeText(text)) else {
            throw invalid(name, "not an ISO-8601 timestamp: \"\(text)\"")
        }
        let milliseconds = Timestamp.milliseconds(date)
        guard milliseconds >= 0 else { throw invalid(name, "before 1970") }
        return milliseconds
    }

    /// `from` and `to` (default: the `defaultSpan` before now), `from` before `to`, and at most
    /// ``maximumIntervals`` intervals of `interval`.
    func range(defaultSpan: Int64, interval: AnalyticsInterval?) throws(CollectorError) -> AnalyticsRange {
        let to = try time("to") ?? now
        let from = try time("from") ?? max(0, to - defaultSpan)
        guard from < to else { throw invalid("from", "must be before to") }
        if let interval, (to - from) / interval.nominalMilliseconds >= Int64(Self.maximumIntervals) {
            throw invalid(
                "from", "the range holds more than \(Self.maximumIntervals) intervals of a \(interval.rawValue)")
        }
        return AnalyticsRange(from: from, to: to, calendar: calendar)
    }

    func invalid(_ name: String, _ message: String) -> CollectorError {
        CollectorError(.invalidParameter, "\(name): \(message)", path: name)
    }

    /// `90s`, `30m`, `12h`, `7d`, `2w` in milliseconds.
    static func duration(_ text: String) -> Int64? {
        guard let unit = text.last, let amount = Int64(text.dropLast()), amount >= 0, amount <= 1_000_000 else {
            return nil
        }
        let scale: Int64
        switch unit {
        case "s": scale = 1000
        case "m": scale = 60_000
        case "h": scale = 3_600_000
        case "d": scale = 86_400_000
        case "w": scale = 604_800_000
        default: return nil
        }
        return amount * scale
    }
}
