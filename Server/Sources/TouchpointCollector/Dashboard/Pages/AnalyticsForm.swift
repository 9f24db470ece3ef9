import Foundation
import TouchpointCore

/// What the analytics pages share: their parameters read as the query API reads them (the form's
/// `datetime-local` times accepted too), and their forms' fields.
enum AnalyticsForm {
    /// The page's parameters for ``AnalyticsParameters``: `from` and `to` as RFC 3339; the
    /// parameters named `without` left out.
    /// - Throws: ``DashboardInputError`` for a time that does not read.
    static func parameters(_ context: DashboardPageContext, without: Set<String> = []) throws -> AnalyticsParameters {
        var values = context.parameters.filter { !without.contains($0.key) }
        for name in ["from", "to"] where !without.contains(name) {
            if let date = try context.time(name) { values[name] = Timestamp.format(date) }
        }
        return AnalyticsParameters(now: context.now, calendar: context.calendar, names: Array(values.keys)) {
            values[$0]
        }
    }

    /// Runs `read`, turning a refused parameter into the page's input error.
    static func read<Value>(_ read: () throws(CollectorError) -> Value) throws -> Value {
        do {
            return try read()
        } catch {
            throw DashboardInputError(
                parameter: error.path ?? "query", message: String(error.message.drop(while: { $0 != ":" }).dropFirst(2))
            )
        }
    }

    /// A text field; `list` names the `datalist` it offers (``TrendsForm/datalists(_:)``).
    static func field(
        _ context: DashboardPageContext, _ name: String, _ label: String, hint: String? = nil, list: String? = nil
    ) -> HTML {
        var described: HTML = list.map { " list=\"\($0)\"" } ?? ""
        var hintText = HTML.empty
        if let hint {
            described += " aria-describedby=\"\(name)-hint\""
            hintText = "<small id=\"\(name)-hint\">\(hint)</small>"
        }
        return """
            <p><label for="\(name)">\(label)</label><input id="\(name)" name="\(name)" value="\(context.parameter(name) ?? "")" autocomplete="off"\(described)>\(hintText)</p>
            """
    }

    /// A choice of values.
    static func select(
        _ context: DashboardPageContext, _ name: String, _ label: String, _ options: [String], default fallback: String
    ) -> HTML {
        let current = context.parameter(name) ?? fallback
        let choices = options.map { option -> HTML in
            let selected: HTML = option == current ? " selected" : ""
            return "<option value=\"\(option)\"\(selected)>\(option)</option>"
        }
        return
            "<p><label for=\"\(name)\">\(label)</label><select id=\"\(name)\" name=\"\(name)\">\(choices)</select></p>"
    }

    /// The range fields, in the source's time zone (which they name).
    static func range(_ context: DashboardPageContext) -> HTML {
        let zone = HTML.escape(context.calendar.identifier)
        return """
            <p><label for="from">From (\(zone))</label><input id="from" name="from" type="datetime-local" value="\(local(context, "from"))"></p>
            <p><label for="to">Until (\(zone))</label><input id="to" name="to" type="datetime-local" value="\(local(context, "to"))"></p>
            <p class="zone">Days, weeks and months begin in \(zone).</p>
            """
    }

    /// What a page says while the daily people are still being built from stored events.
    static func partialNotice(_ partial: Bool) -> HTML {
        guard partial else { return .empty }
        return """
            <p class="notice" role="status">People are still being counted from the events stored before this \
            version or time zone: these figures are partial until that is done.</p>
            """
    }

    /// A time parameter as a `datetime-local` field shows it (`2026-11-22T09:41`), in the source's
    /// time zone; as it is when it is not a time.
    static func local(_ context: DashboardPageContext, _ name: String) -> String {
        guard let text = context.parameter(name) else { return "" }
        guard let date = try? context.time(name) else { return text }
        let time = Timestamp.milliseconds(date)
        let formatted = Timestamp.format(Timestamp.date(milliseconds: time + context.calendar.offset(at: time)))
        return String(formatted.prefix(formatted.dropFirst(16).hasPrefix(":00.000") ? 16 : 19))
    }

    /// A GET form to `path` around `fields` (none on a dashboard's tile); an insight page's
    /// form also offers the source's event names and cohorts.
    static func form(_ context: DashboardPageContext, path: String, label: String, fields: HTML, submit: String) -> HTML
    {
        guard !context.isTile else { return .empty }
        var fields = fields
        if InsightKind(page: path) != nil {
            fields += InsightFields.cohort(context) + InsightFields.eventNames(context)
        }
        let sourceField: HTML =
            context.source == CollectorSource.defaultID
            ? "" : "<input type=\"hidden\" name=\"source\" value=\"\(context.source)\">"
        return """
            <form method="get" action="\(path)" class="filters" aria-label="\(label)">\(sourceField)
            \(fields)
            <p class="actions"><button type="submit">\(submit)</button></p>
            </form>
            """
    }

    /// A number of seconds as `2 h 5 min`, `4 min 30 s` or `12 s`.
    static func duration(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite else { return "–" }
        let whole = Int(seconds.rounded())
        if whole >= 86_400 { return "\(whole / 86_400) d \(whole % 86_400 / 3600) h" }
        if whole >= 3600 { return "\(whole / 3600) h \(whole % 3600 / 60) min" }
        if whole >= 60 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole) s"
    }
}
