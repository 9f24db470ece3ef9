import Foundation
import TouchpointCore

/// The trends page's form: its fields are the query API's parameters (``AnalyticsParameters``'s
/// trends grammar), so a trend's address is its insight. Series and filters are fieldsets of
/// their own; "Add series" and "Add filter" are submit buttons that show the form again with one
/// more (no script needed). Every event and property field offers the source's definitions
/// (``Definitions``) through a `datalist`.
enum TrendsForm {
    /// The letters of the series the parameters give, in order (`a` for the bare `event`).
    static func seriesLetters(_ context: DashboardPageContext) -> [String] {
        AnalyticsParameters.seriesLetters.filter { letter in
            context.parameter("\(letter).event") != nil || (letter == "a" && context.parameter("event") != nil)
        }
    }

    /// Series `letter`'s `field`, as the parameters give it (series A: with or without `a.`).
    static func seriesValue(_ context: DashboardPageContext, _ letter: String, _ field: String) -> String? {
        context.parameter("\(letter).\(field)") ?? (letter == "a" ? context.parameter(field) : nil)
    }

    /// The filter numbers `prefix`where.N.… the parameters give.
    static func filterNumbers(_ context: DashboardPageContext, prefix: String) -> [Int] {
        (1...AnalyticsParameters.maximumFilters).filter { number in
            ["property", "value"].contains { context.parameter("\(prefix)where.\(number).\($0)") != nil }
        }
    }

    static func form(_ context: DashboardPageContext, definitions: Definitions) -> HTML {
        var letters = seriesLetters(context)
        if letters.isEmpty || context.parameter("add") == "series",
            let next = AnalyticsParameters.seriesLetters.first(where: { !letters.contains($0) })
        {
            letters.append(next)
        }
        var series = HTML.empty
        for letter in letters { series += self.series(context, letter) }
        var filterNumbers = self.filterNumbers(context, prefix: "")
        if context.parameter("add") == "filter",
            let next = (1...AnalyticsParameters.maximumFilters).first(where: { !filterNumbers.contains($0) })
        {
            filterNumbers.append(next)
        }
        let filters = filterNumbers.map { filter(context, prefix: "", number: $0) }
        let sourceField: HTML =
            context.source == CollectorSource.defaultID
            ? "" : "<input type=\"hidden\" name=\"source\" value=\"\(context.source)\">"
        let preset =
            context.parameter("date") ?? (context.parameter("from") == nil ? DatePreset.last30Days.rawValue : "")
        let presets =
            [("", "Custom: from and until")] + DatePreset.allCases.map { ($0.rawValue, $0.label) }
        let compared: HTML = context.parameter("compare") == "previous" ? " checked" : ""
        return """
            <form method="get" action="/dashboard/trends" class="insight" aria-label="Trend">\(sourceField)
            <div class="series-list">\(series)</div>
            <p class="add"><button type="submit" name="add" value="series" class="secondary">Add series</button></p>
            <fieldset class="filter-list" id="filters"><legend>Filters (on every series)</legend>
            \(filters)
            <p class="add"><button type="submit" name="add" value="filter" class="secondary">Add filter</button></p>
            </fieldset>
            <div class="filters">
            <p><label for="breakdown">Break down by</label><input id="breakdown" name="breakdown" list="property-names" value="\(context.parameter("breakdown") ?? "")" autocomplete="off"></p>
            <p><label for="formula">Formula</label><input id="formula" name="formula" value="\(context.parameter("formula") ?? "")" placeholder="A / B" autocomplete="off" aria-describedby="formula-hint"><small id="formula-hint">Series letters, numbers, + − × ÷ as + - * /</small></p>
            \(AnalyticsForm.select(context, "interval", "Per", AnalyticsInterval.allCases.map(\.rawValue), default: "day"))
            \(choice("date", "Dates", presets, current: preset))
            \(AnalyticsForm.range(context))
            <p class="check"><input type="checkbox" id="compare" name="compare" value="previous"\(compared)><label for="compare">Compare with the period before</label></p>
            \(choice("display", "Show as", TrendDisplay.allCases.map { ($0.rawValue, $0.rawValue) }, current: context.parameter("display") ?? "line"))
            </div>
            <p class="actions"><button type="submit">Show</button></p>
            </form>
            \(datalists(definitions))
            """
    }

    /// One series' fieldset: its event, what it shows, its numeric property and its own filters.
    private static func series(_ context: DashboardPageContext, _ letter: String) -> HTML {
        let label = letter.uppercased()
        let math = seriesValue(context, letter, "math") ?? "total"
        let maths = [
            ("total", "Total events"), ("users", "Unique people"), ("dau", "Daily active people"),
            ("wau", "Weekly active people"), ("mau", "Monthly active people"), ("sum", "Sum of a property"),
            ("avg", "Average of a property"), ("median", "Median of a property"),
            ("p90", "90th percentile of a property"),
        ]
        let filters = filterNumbers(context, prefix: "\(letter).").map {
            filter(context, prefix: "\(letter).", number: $0)
        }
        return """
            <fieldset class="series" id="series-\(letter)"><legend>Series \(label)</legend>
            <p><label for="\(letter).event">Event</label><input id="\(letter).event" name="\(letter).event" list="event-names" value="\(seriesValue(context, letter, "event") ?? "")" autocomplete="off"></p>
            \(choice("\(letter).math", "Show", maths, current: math))
            <p><label for="\(letter).property">Of the property</label><input id="\(letter).property" name="\(letter).property" list="numeric-properties" value="\(seriesValue(context, letter, "property") ?? "")" autocomplete="off"></p>
            \(filters)
            </fieldset>
            """
    }

    /// One filter's row: its property, how it compares and with what.
    private static func filter(_ context: DashboardPageContext, prefix: String, number: Int) -> HTML {
        let name = "\(prefix)where.\(number)"
        let ops = PropertyFilter.Operator.allCases.map { ($0.rawValue, $0.symbol) }
        let described =
            prefix.isEmpty ? "Filter \(number)" : "Series \(prefix.dropLast().uppercased()) filter \(number)"
        return """
            <div class="filter" id="\(name)" role="group" aria-label="\(described)">\
            <p><label for="\(name).property">Property</label><input id="\(name).property" name="\(name).property" list="filter-properties" value="\(context.parameter("\(name).property") ?? "")" autocomplete="off"></p>\
            \(choice("\(name).op", "is", ops, current: context.parameter("\(name).op") ?? "eq"))\
            <p><label for="\(name).value">Value</label><input id="\(name).value" name="\(name).value" value="\(context.parameter("\(name).value") ?? "")" autocomplete="off"></p>\
            </div>
            """
    }

    /// A select of `(value, label)` options.
    private static func choice(_ name: String, _ label: String, _ options: [(String, String)], current: String) -> HTML
    {
        let choices = options.map { option -> HTML in
            let selected: HTML = option.0 == current ? " selected" : ""
            return "<option value=\"\(option.0)\"\(selected)>\(option.1)</option>"
        }
        return
            "<p><label for=\"\(name)\">\(label)</label><select id=\"\(name)\" name=\"\(name)\">\(choices)</select></p>"
    }

    /// The definitions as the fields' lists: event names; properties (for the breakdown); those
    /// and the traits as `person.…` (for filters); numeric properties (for sums and averages).
    static func datalists(_ definitions: Definitions) -> HTML {
        func options(_ entries: [(String, Int)]) -> HTML {
            let list = entries.prefix(1000).map { entry -> HTML in
                "<option value=\"\(entry.0)\" label=\"\(entry.0) · \(DashboardFormat.number(entry.1)) events\"></option>"
            }
            return "\(list)"
        }
        let properties = definitions.properties
        let events = options(definitions.events.map { ($0.name, $0.events) })
        let names = options(properties.map { ($0.name, $0.events) })
        let filters = options(
            properties.map { ($0.name, $0.events) } + definitions.traits.map { ("person.\($0.name)", $0.events) })
        let numbers = options(properties.filter { $0.types[.number] != nil }.map { ($0.name, $0.events) })
        return """
            <datalist id="event-names">\(events)</datalist>
            <datalist id="property-names">\(names)</datalist>
            <datalist id="filter-properties">\(filters)</datalist>
            <datalist id="numeric-properties">\(numbers)</datalist>
            """
    }
}
