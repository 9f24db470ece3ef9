import Foundation
import TouchpointCore

/// The parameters of `GET /v1/query/trends` (and the dashboard's trends page, whose form fields
/// are these parameters):
///
/// - series `a` to `j`: `a.event`, `a.math` (`total`, `users`, `dau`, `wau`, `mau`, `sum`, `avg`,
///   `median`, `p90`), `a.property` (the numeric property of `sum` to `p90`); series A may drop
///   its `a.` (`event`, `math`, `property`: one series as before); active people (`dau` …) need
///   days and take no filters;
/// - filters `where.1.property`, `where.1.op` (`eq`, `ne`, `contains`, `gt`, `lt`, `set`; `eq` when
///   absent), `where.1.value`, up to `where.10.…`, on every series; `b.where.1.…` on series B
///   only; a property `person.plan` is the person's trait `plan`;
/// - `breakdown`, `interval`, `from` and `to` or `date` (``DatePreset``), `compare=previous`,
///   `formula` (``TrendFormula``), `display` (``TrendDisplay``).
///
/// A parameter that does not read is a 400 naming it, and so is a name under `where.` or a series
/// letter that is none of these.
extension AnalyticsParameters {
    /// The series letters, in order.
    static let seriesLetters = "abcdefghij".map(String.init)

    /// The most filters of one scope (`where.` or one series').
    static let maximumFilters = 10

    func trends() throws(CollectorError) -> TrendInsight {
        try checkTrendNames()
        let preset = try datePreset()
        let interval = try self.interval(
            allowed: AnalyticsInterval.allCases, default: preset?.defaultInterval ?? .day)
        let (range, previous) = try trendRanges(interval: interval, preset: preset)
        var breakdown: String?
        if let property = value("breakdown") {
            guard PropertyName.isValid(property) else {
                throw invalid(
                    "breakdown", "expected a property name (letters, digits and _, at most 64), got \"\(property)\"")
            }
            breakdown = property
        }
        let shared = try filters(prefix: "")
        let cohort = try cohort()
        var series: [TrendInsight.Series] = []
        for letter in Self.seriesLetters {
            guard let (name, event) = try seriesValue(letter, "event") else {
                // A series' other parameters without its event would be lost.
                if let given = names.sorted().first(where: { $0.hasPrefix("\(letter).") }) {
                    throw invalid("\(letter).event", "missing (\(given) is given)")
                }
                continue
            }
            guard event.utf8.count <= 200 else { throw invalid(name, "longer than 200 bytes") }
            var query = TrendQuery(
                event: event, interval: interval, range: range, breakdown: breakdown,
                measure: try math(letter, interval: interval), filters: shared + (try filters(prefix: "\(letter).")))
            query.cohort = cohort
            if query.math != nil, !query.filters.isEmpty {
                throw invalid(
                    try seriesValue(letter, "math")?.name ?? "math",
                    "\(query.measure.name) counts every person who did the event: it takes no filters")
            }
            series.append(TrendInsight.Series(label: letter.uppercased(), query: query))
        }
        guard !series.isEmpty else { throw invalid("event", "missing") }
        var formula: TrendFormula?
        if let text = value("formula") {
            guard text.utf8.count <= 200 else { throw invalid("formula", "longer than 200 bytes") }
            do {
                formula = try TrendFormula(text)
            } catch {
                throw invalid("formula", error.message)
            }
            let given = Set(series.map(\.label))
            if let missing = formula?.series.subtracting(given).sorted().first {
                throw invalid("formula", "series \(missing) is not given (\(missing.lowercased()).event)")
            }
        }
        var compared: AnalyticsRange?
        if let text = value("compare") {
            guard text == "previous" else { throw invalid("compare", "expected previous, got \"\(text)\"") }
            compared = previous
        }
        var display = TrendDisplay.line
        if let text = value("display") {
            guard let chosen = TrendDisplay(rawValue: text) else {
                let names = TrendDisplay.allCases.map(\.rawValue).joined(separator: ", ")
                throw invalid("display", "expected \(names), got \"\(text)\"")
            }
            display = chosen
        }
        return TrendInsight(series: series, formula: formula, previous: compared, display: display)
    }

    /// `date`, when given (then `from` and `to` are not).
    func datePreset() throws(CollectorError) -> DatePreset? {
        guard let text = value("date") else { return nil }
        guard let preset = DatePreset(rawValue: text) else {
            let names = DatePreset.allCases.map(\.rawValue).joined(separator: ", ")
            throw invalid("date", "expected \(names), got \"\(text)\"")
        }
        guard value("from") == nil, value("to") == nil else {
            throw invalid("date", "give either date or from and to, not both")
        }
        return preset
    }

    /// The range (by `date`, or `from` and `to` defaulting to the interval's usual span) and the
    /// period before it: the preset's, or as long, just before.
    private func trendRanges(interval: AnalyticsInterval, preset: DatePreset?) throws(CollectorError)
        -> (range: AnalyticsRange, previous: AnalyticsRange)
    {
        if let preset {
            let ranges = preset.ranges(now: now, calendar: calendar)
            for range in [ranges.range, ranges.previous]
            where (range.to - range.from) / interval.nominalMilliseconds >= Int64(Self.maximumIntervals) {
                throw invalid(
                    "interval",
                    "\(preset.rawValue) holds more than \(Self.maximumIntervals) intervals of a \(interval.rawValue)")
            }
            return ranges
        }
        // By default: the last 48 hours, 30 days, 12 weeks or 12 months.
        let span: Int64 =
            switch interval {
            case .hour: 48 * interval.nominalMilliseconds
            case .day: 30 * interval.nominalMilliseconds
            case .week, .month: 12 * interval.nominalMilliseconds
            }
        var range = try self.range(defaultSpan: span, interval: interval)
        // By days, weeks or months a trend counts whole local days, as its people do.
        if interval != .hour { range = range.wholeDays }
        var previous = AnalyticsRange(from: range.from - (range.to - range.from), to: range.from, calendar: calendar)
        if interval != .hour { previous = previous.wholeDays }
        return (range, previous)
    }

    /// Series `letter`'s `field`, and the name it was given by: `a.field`, or for series A `field`
    /// alone (both: a 400).
    private func seriesValue(_ letter: String, _ field: String) throws(CollectorError) -> (name: String, value: String)?
    {
        let prefixed = "\(letter).\(field)"
        if letter == "a", let bare = value(field) {
            guard value(prefixed) == nil else { throw invalid(prefixed, "give \(field) or \(prefixed), not both") }
            return (field, bare)
        }
        return value(prefixed).map { (prefixed, $0) }
    }

    /// Series `letter`'s math (`total` when absent); active people need days.
    private func math(_ letter: String, interval: AnalyticsInterval) throws(CollectorError) -> TrendMath {
        let math = try seriesValue(letter, "math")
        let property = try seriesValue(letter, "property")
        let name = math?.value ?? "total"
        guard TrendMath.names.contains(name) else {
            throw invalid(
                math?.name ?? "math", "expected \(TrendMath.names.joined(separator: ", ")), got \"\(name)\"")
        }
        if let people = ActivePeople(rawValue: name) {
            guard interval != .hour else {
                throw invalid(math?.name ?? "math", "\(name) needs interval day, week or month")
            }
            return .active(people)
        }
        guard name != "total", name != "users" else { return name == "total" ? .total : .users }
        guard let property else {
            throw invalid(
                letter == "a" ? "property" : "\(letter).property", "missing (math \(name) needs a numeric property)")
        }
        guard PropertyName.isValid(property.value) else {
            throw invalid(
                property.name,
                "expected a property name (letters, digits and _, at most 64), got \"\(property.value)\"")
        }
        return TrendMath(name: name, property: property.value) ?? .total
    }

    /// The filters `prefix`where.1.… to `prefix`where.10.… (a filter is there when its property is).
    func filters(prefix: String) throws(CollectorError) -> [PropertyFilter] {
        var filters: [PropertyFilter] = []
        for number in 1...Self.maximumFilters {
            let name = "\(prefix)where.\(number)."
            guard let property = value(name + "property") else {
                if value(name + "value") != nil { throw invalid(name + "property", "missing (\(name)value is given)") }
                continue
            }
            var filter = PropertyFilter(property: property, op: .equals)
            if property.hasPrefix("person.") {
                filter.scope = .person
                filter.property = String(property.dropFirst("person.".count))
            }
            guard PropertyName.isValid(filter.property) else {
                throw invalid(
                    name + "property",
                    "expected a property name (letters, digits and _, at most 64; person. before a trait), got \"\(property)\""
                )
            }
            if let text = value(name + "op") {
                guard let op = PropertyFilter.Operator(rawValue: text) else {
                    let names = PropertyFilter.Operator.allCases.map(\.rawValue).joined(separator: ", ")
                    throw invalid(name + "op", "expected \(names), got \"\(text)\"")
                }
                filter.op = op
            }
            if filter.op != .isSet {
                guard let text = value(name + "value") else {
                    throw invalid(name + "value", "missing (\(filter.op.rawValue) compares with a value)")
                }
                guard text.utf8.count <= 200 else { throw invalid(name + "value", "longer than 200 bytes") }
                if filter.op.isNumeric, Double(text).map({ !$0.isFinite }) ?? true {
                    throw invalid(name + "value", "expected a number for \(filter.op.rawValue), got \"\(text)\"")
                }
                filter.value = text
            }
            filters.append(filter)
        }
        return filters
    }

    /// Refuses names under `where.` or a series letter (`b.`) that none of the trend's parameters has.
    private func checkTrendNames() throws(CollectorError) {
        let fields = ["event", "math", "property"]
        let filterFields = ["property", "op", "value"]
        func isFilter(_ rest: Substring) -> Bool {
            let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "where", let number = Int(parts[1]),
                (1...Self.maximumFilters).contains(number), String(parts[1]) == String(number)
            else { return false }
            return filterFields.contains(String(parts[2]))
        }
        for name in names.sorted() {
            let scalars = Array(name.unicodeScalars)
            if name.hasPrefix("where.") {
                guard isFilter(Substring(name)) else {
                    throw invalid(
                        name,
                        "unknown parameter; filters are where.N.property, where.N.op and where.N.value, N from 1 to \(Self.maximumFilters)"
                    )
                }
            } else if scalars.count > 2, scalars[1] == ".", ("a"..."z").contains(scalars[0]) {
                let letter = String(scalars[0])
                let rest = name.dropFirst(2)
                guard Self.seriesLetters.contains(letter) else {
                    throw invalid(name, "unknown parameter; series are a to \(Self.seriesLetters.last ?? "")")
                }
                guard fields.contains(String(rest)) || isFilter(rest) else {
                    throw invalid(
                        name,
                        "unknown parameter; a series has \(letter).event, \(letter).math, \(letter).property and \(letter).where.N.…"
                    )
                }
            }
        }
    }
}
