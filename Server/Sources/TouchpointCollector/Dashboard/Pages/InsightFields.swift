import Foundation
import TouchpointCore

/// Form fields the insight pages share: an event picked from the names the source has seen,
/// property filters (property, comparison, value), the cohort picker, and reading them back.
enum InsightFields {
    /// The list every event field offers: the names the source has seen.
    static let eventList = "event-names"

    /// The `<datalist>` of the source's event names.
    static func eventNames(_ context: DashboardPageContext) -> HTML {
        let options = context.eventNames.map { name -> HTML in "<option value=\"\(name)\"></option>" }
        return "<datalist id=\"\(eventList)\">\(options)</datalist>"
    }

    /// A text field offering the source's event names.
    static func event(_ name: String, _ label: String, value: String?, hint: String? = nil) -> HTML {
        let hintText: HTML = hint.map { "<small id=\"\(name)-hint\">\($0)</small>" } ?? ""
        let described: HTML = hint == nil ? "" : " aria-describedby=\"\(name)-hint\""
        return """
            <p><label for="\(name)">\(label)</label><input id="\(name)" name="\(name)" value="\(value ?? "")" \
            list="\(eventList)" autocomplete="off"\(described)>\(hintText)</p>
            """
    }

    /// One filter's three fields, named `<prefix>.property<n>`, `.operator<n>`, `.value<n>`.
    static func filter(_ prefix: String, _ number: Int, _ filter: PropertyFilter?, label: String) -> HTML {
        let id = "\(prefix)-\(number)".replacingOccurrences(of: ".", with: "-")
        let options = PropertyFilter.Operator.allCases.map { comparison -> HTML in
            let selected: HTML = comparison == (filter?.op ?? .equals) ? " selected" : ""
            return "<option value=\"\(comparison.sign)\"\(selected)>\(comparison.symbol)</option>"
        }
        return """
            <p><label for="\(id)-property">\(label)</label><input id="\(id)-property" name="\(prefix).property\(number)" \
            value="\(filter?.property ?? "")" autocomplete="off" placeholder="property"></p>
            <p><label for="\(id)-operator">Compared</label><select id="\(id)-operator" name="\(prefix).operator\(number)">\(options)</select></p>
            <p><label for="\(id)-value">Value</label><input id="\(id)-value" name="\(prefix).value\(number)" \
            value="\(filter?.value ?? "")" autocomplete="off"></p>
            """
    }

    /// The filters named `<prefix>.property1`… in the form, those with a property.
    /// - Throws: ``DashboardInputError`` naming the field of a filter that cannot be used.
    static func filters(_ context: DashboardPageContext, _ prefix: String, forbidden: String = "") throws
        -> [PropertyFilter]
    {
        var filters: [PropertyFilter] = []
        for number in 1...maximumFilters {
            guard let property = context.parameter("\(prefix).property\(number)") else { continue }
            let operatorName = context.parameter("\(prefix).operator\(number)") ?? "="
            guard let comparison = PropertyFilter.Operator(name: operatorName) else {
                throw DashboardInputError(
                    parameter: "\(prefix).operator\(number)", message: "not a comparison: \"\(operatorName)\"")
            }
            let value = context.parameters["\(prefix).value\(number)"] ?? ""
            if let character = value.first(where: { forbidden.contains($0) }) {
                throw DashboardInputError(
                    parameter: "\(prefix).value\(number)", message: "a value here may not hold \(character)")
            }
            do {
                filters.append(
                    try PropertyFilter(property: property, op: comparison, value: value).validated())
            } catch {
                throw DashboardInputError(parameter: "\(prefix).property\(number)", message: error.message)
            }
        }
        return filters
    }

    /// The most filters a form reads under one prefix.
    static let maximumFilters = 5

    /// The filter rows of a form: one per filter, and one empty row when there is none.
    static func filterRows(_ prefix: String, _ filters: [PropertyFilter], label: String) -> HTML {
        var rows = HTML.empty
        for number in 1...max(1, min(filters.count, maximumFilters)) {
            rows += filter(prefix, number, number <= filters.count ? filters[number - 1] : nil, label: label)
        }
        return rows
    }

    /// The cohort picker: everyone, or one of the source's cohorts.
    static func cohort(_ context: DashboardPageContext) -> HTML {
        let current = context.parameter("cohort")
        var options: HTML = "<option value=\"\">Everyone</option>"
        for cohort in context.cohorts {
            let selected: HTML = String(cohort.id) == current ? " selected" : ""
            options += "<option value=\"\(String(cohort.id))\"\(selected)>\(cohort.name)</option>"
        }
        return "<p><label for=\"cohort\">People</label><select id=\"cohort\" name=\"cohort\">\(options)</select></p>"
    }

    /// A choice of durations, the current one among them.
    static func duration(_ context: DashboardPageContext, _ name: String, _ label: String, default fallback: String)
        -> HTML
    {
        var choices = ["30m", "1h", "4h", "1d", "3d", "7d", "14d", "30d", "90d"]
        let current = context.parameter(name) ?? fallback
        if !choices.contains(current) { choices.append(current) }
        return AnalyticsForm.select(context, name, label, choices, default: fallback)
    }
}
