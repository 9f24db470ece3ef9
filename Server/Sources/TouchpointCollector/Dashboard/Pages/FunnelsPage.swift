import Foundation
import TouchpointCore

/// `/dashboard/funnels`: how many people went through a sequence of events, each step picked from
/// the events the source has seen and filtered by its properties; the whole funnel filtered too,
/// broken down by a property of the first step, and how long people took to get through.
enum FunnelsPage {
    /// The most steps the form shows.
    static let maximumSteps = 10

    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let values = try parameters(context)
        var query: FunnelQuery?
        if values["steps"] != nil {
            query = try AnalyticsForm.read { () throws(CollectorError) in
                try AnalyticsParameters(now: context.now, calendar: context.calendar) { values[$0] }.funnel()
            }
        }
        let form = AnalyticsForm.form(
            context, path: "/dashboard/funnels", label: "Funnel", fields: fields(context, query), submit: "Show")
        guard let query else {
            return DashboardPage(
                title: "Funnels", section: "/dashboard/funnels",
                body: "\(form)<p class=\"empty\">Pick two or more steps to see how many people get through them.</p>")
        }
        let result = try await context.services.query.funnel(source: context.source, query)
        let chart = SVGChart.rows(
            result.steps.map { SVGChart.Bar(label: $0.step.description, value: $0.users) }, title: "People per step",
            description: result.steps.map { "\($0.step): \($0.users)" }.joined(separator: "; "), id: "funnel-chart")
        let rows = result.steps.map { step -> HTML in
            """
            <tr><th scope="row">\(step.step.description)</th><td class="users">\(step.users)</td>\
            <td>\(DashboardFormat.percent(step.conversionFromFirst))</td><td>\(DashboardFormat.percent(step.conversionFromPrevious))</td>\
            <td>\(AnalyticsForm.duration(step.medianSecondsFromPrevious))</td></tr>
            """
        }
        let table = DashboardLayout.table(
            caption: caption(query),
            head: ["Step", "People", "Of the first step", "Of the step before", "Median time from the step before"],
            rows: rows, id: "funnel", empty: "")
        let csv = DashboardCSV(
            name: "funnel",
            header: ["step", "people", "conversionFromFirst", "conversionFromPrevious", "medianSecondsFromPrevious"],
            rows: result.steps.map { step in
                [
                    step.step.description, String(step.users), String(step.conversionFromFirst),
                    String(step.conversionFromPrevious), step.medianSecondsFromPrevious.map { String($0) } ?? "",
                ]
            })
        let body: HTML = """
            \(form)
            \(chart)
            \(table)
            \(breakdown(result))
            \(conversionTimes(result))
            \(DashboardLayout.csvLink(context, path: "/dashboard/funnels"))
            """
        return DashboardPage(
            title: "Funnels", section: "/dashboard/funnels", body: body, csv: csv, insight: canonical(values))
    }

    /// What the table's caption says the funnel counts.
    static func caption(_ query: FunnelQuery) -> String {
        var parts = ["People through each step within \(AnalyticsForm.duration(Double(query.window / 1000)))"]
        if !query.filters.isEmpty {
            parts.append("where \(query.filters.map(\.description).joined(separator: " and "))")
        }
        return parts.joined(separator: ", ")
    }

    // MARK: Form

    /// The page's parameters as the query API names them: the form's step and filter fields,
    /// when it sent them, read into `steps` and `where`; times as RFC 3339.
    /// - Throws: ``DashboardInputError`` naming the field that cannot be used.
    static func parameters(_ context: DashboardPageContext) throws -> [String: String] {
        var values = context.parameters
        for name in ["from", "to"] {
            if let date = try context.time(name) { values[name] = Timestamp.format(date) }
        }
        let formFields = values.keys.filter { $0.hasPrefix("step") || $0.hasPrefix("where.") }
        guard formFields.contains(where: { $0 != "steps" }) else { return values }
        var steps: [String] = []
        for number in 1...maximumSteps {
            guard let event = context.parameter("step\(number)") else { continue }
            if let character = event.first(where: { ",;[]".contains($0) }) {
                throw DashboardInputError(
                    parameter: "step\(number)", message: "an event here may not hold \(character)")
            }
            let filters = try InsightFields.filters(context, "step\(number)", forbidden: ",;[]")
            steps.append(FunnelStep(event: event, filters: filters).description)
        }
        let filters = try InsightFields.filters(context, "where", forbidden: ";")
        for name in formFields { values[name] = nil }
        values["steps"] = steps.isEmpty ? nil : steps.joined(separator: ",")
        values["where"] = filters.isEmpty ? nil : filters.map(\.description).joined(separator: ";")
        return values
    }

    /// The parameters an insight keeps.
    static func canonical(_ values: [String: String]) -> [String: String] {
        values.filter { !InsightKind.ignoredParameters.contains($0.key) && !$0.value.isEmpty }
    }

    static func fields(_ context: DashboardPageContext, _ query: FunnelQuery?) -> HTML {
        let steps = query?.steps ?? []
        var rows = HTML.empty
        for number in 1...min(maximumSteps, max(3, steps.count + 1)) {
            let step = number <= steps.count ? steps[number - 1] : nil
            rows += """
                <fieldset class="step"><legend>Step \(number)</legend>
                \(InsightFields.event("step\(number)", "Event", value: step?.event))
                \(InsightFields.filterRows("step\(number)", step?.filters ?? [], label: "Where property"))
                </fieldset>
                """
        }
        return """
            \(rows)
            <fieldset class="step"><legend>Every step</legend>
            \(InsightFields.filterRows("where", query?.filters ?? [], label: "Where property"))
            </fieldset>
            \(InsightFields.duration(context, "window", "Within", default: "1d"))
            \(AnalyticsForm.field(context, "breakdown", "Break down by property", hint: "Its value on the first step, such as plan"))
            \(AnalyticsForm.range(context))
            """
    }

    // MARK: Results

    /// The funnel per value of the breakdown property, when there is one.
    static func breakdown(_ result: FunnelResult) -> HTML {
        guard let property = result.query.breakdown else { return .empty }
        let rows = result.groups.map { group -> HTML in
            let name = group.isOther ? "other" : group.value ?? "(not set)"
            let cells = group.steps.map { HTML("<td>\($0.users)</td>") }
            let converted = group.steps.last?.conversionFromFirst
            return
                "<tr data-value=\"\(name)\"><th scope=\"row\">\(name)</th>\(cells)<td>\(DashboardFormat.percent(converted))</td></tr>"
        }
        return """
            <h2>By \(property)</h2>
            \(DashboardLayout.table(
                caption: "People per step, by \(property) on their first step",
                head: [property] + result.steps.map(\.step.description) + ["Converted"], rows: rows,
                id: "funnel-breakdown", empty: "No one started the funnel."))
            """
    }

    /// How long the people who got through took, as a chart and a table.
    static func conversionTimes(_ result: FunnelResult) -> HTML {
        let times = result.timeToConvert
        let bars = times.buckets.map {
            SVGChart.Bar(label: label($0), value: $0.users, detail: "from \(label($0))")
        }
        let rows = times.buckets.map { bucket -> HTML in
            "<tr><th scope=\"row\">\(label(bucket))</th><td>\(bucket.users)</td></tr>"
        }
        let summary =
            times.users == 0
            ? "No one reached the last step."
            : "\(times.users) people reached the last step; the median took \(AnalyticsForm.duration(times.medianSeconds))."
        return """
            <h2>Time to convert</h2>
            <p id="conversion-summary">\(summary)</p>
            \(SVGChart.columns(bars, title: "People by time from the first step to the last", description: summary, id: "conversion-chart"))
            \(DashboardLayout.table(
                caption: "People by time from the first step to the last", head: ["Time", "People"], rows: rows,
                id: "conversion-times", empty: ""))
            """
    }

    /// `10 s – 30 s`.
    static func label(_ bucket: FunnelResult.ConversionTimes.Bucket) -> String {
        "\(AnalyticsForm.duration(Double(bucket.fromSeconds))) – \(AnalyticsForm.duration(Double(bucket.toSeconds)))"
    }
}
