import Foundation
import TouchpointCore

/// `/dashboard/trends`: one or more series per interval (events, people, or a numeric property's
/// sum, average, median or 90th percentile), filtered, broken down by a property (a line per
/// value), with a formula and the period before; as lines, bars or numbers, with a legend and
/// the numbers in a table. Its form (``TrendsForm``) offers the source's definitions.
enum TrendsPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let definitions = try await context.services.query.definitions(source: context.source, limit: 1000)
        let form = TrendsForm.form(context, definitions: definitions)
        guard !TrendsForm.seriesLetters(context).isEmpty else {
            return DashboardPage(
                title: "Trends", section: "/dashboard/trends",
                body: "\(form)<p class=\"empty\">Pick an event to see how often it happens.</p>")
        }
        // A date preset stands for the range: the form's from and until are then not used.
        let parameters = try AnalyticsForm.parameters(
            context, without: context.parameter("date") == nil ? [] : ["from", "to"])
        let insight = try AnalyticsForm.read { () throws(CollectorError) in try parameters.trends() }
        let result = try await context.services.query.trends(source: context.source, insight)
        let interval = insight.series[0].query.interval
        let labels = result.starts.map { label($0, insight.series[0].query) }
        // With a formula the chart shows its lines, with a breakdown the values' lines (the others
        // are in the table).
        let charted = result.lines.filter { line in
            (insight.formula == nil || line.label == "formula")
                && (insight.series[0].query.breakdown == nil || line.isBreakdown)
        }
        var series: [SVGChart.Series] = []
        for (offset, line) in charted.enumerated() {
            series.append(SVGChart.Series(name: name(line, insight), values: line.values, colour: offset))
            if let before = line.previousValues {
                series.append(
                    SVGChart.Series(
                        name: "\(name(line, insight)) (period before)", values: aligned(before, labels.count),
                        colour: offset, isDashed: true))
            }
        }
        let title =
            "\(insight.series.map { "\($0.label): \($0.query.event)" }.joined(separator: ", ")) per \(interval.rawValue)"
        let description = charted.map { "\(name($0, insight)): \(DashboardFormat.number($0.aggregate))" }
            .joined(separator: "; ")
        let chart: HTML
        switch insight.display {
        case .line:
            chart = SVGChart.lines(series, labels: labels, title: title, description: description, id: "trend-chart")
        case .bar:
            chart = SVGChart.groupedColumns(
                series, labels: labels, title: title, description: description, id: "trend-chart")
        case .number:
            chart = numbers(charted, insight)
        }
        let body: HTML = """
            \(form)
            <section aria-labelledby="trend-heading">
            <h2 id="trend-heading">\(title)</h2>
            \(AnalyticsForm.partialNotice(result.results.contains(where: \.partial)))
            \(chart)
            \(SVGChart.legend(series, id: "trend-legend"))
            \(table(result, insight, labels: labels))
            \(DashboardLayout.csvLink(context, path: "/dashboard/trends"))
            </section>
            """
        return DashboardPage(title: "Trends", section: "/dashboard/trends", body: body, csv: csv(result, insight))
    }

    /// `A · page_view`, `A · plan = pro`, `formula · pro`.
    static func name(_ line: TrendInsightResult.Line, _ insight: TrendInsight) -> String {
        guard line.label != "formula" else {
            return line.isBreakdown
                ? "\(insight.formula?.text ?? "") · \(valueName(line))" : insight.formula?.text ?? ""
        }
        let query = insight.series.first { $0.label == line.label }?.query
        let base =
            "\(line.label) · \(query?.event ?? "")\(query.map { $0.measure == .total ? "" : " (\($0.measure))" } ?? "")"
        return line.isBreakdown ? "\(base) · \(valueName(line))" : base
    }

    private static func valueName(_ line: TrendInsightResult.Line) -> String {
        line.isOther ? "other" : line.value ?? "(not set)"
    }

    /// The period before's values in as many places as the range has intervals (it may have one
    /// more or fewer: a month against the one before).
    private static func aligned(_ values: [Double?], _ count: Int) -> [Double?] {
        (0..<count).map { $0 < values.count ? values[$0] : nil }
    }

    /// Each line's value over the whole range, as a figure.
    private static func numbers(_ lines: [TrendInsightResult.Line], _ insight: TrendInsight) -> HTML {
        let figures = lines.map { line -> HTML in
            let before: HTML =
                line.previousValues == nil
                ? ""
                : " <small class=\"previous\">(\(DashboardFormat.number(line.previousAggregate)) the period before)</small>"
            return """
                <p class="figure" data-series="\(name(line, insight))"><span class="number">\(DashboardFormat.number(line.aggregate))</span> \(name(line, insight))\(before)</p>
                """
        }
        return
            "<section class=\"figures\" id=\"trend-numbers\" aria-label=\"Over the whole range\">\(figures)</section>"
    }

    /// A row per interval, a column per line (and one per line's period before).
    private static func table(_ result: TrendInsightResult, _ insight: TrendInsight, labels: [String]) -> HTML {
        var head = ["Interval (\(insight.series[0].query.range.calendar.identifier))"]
        for line in result.lines {
            head.append(name(line, insight))
            if line.previousValues != nil { head.append("\(name(line, insight)) (period before)") }
        }
        let rows = labels.indices.map { index -> HTML in
            var cells = HTML.empty
            for (offset, line) in result.lines.enumerated() {
                cells += "<td data-line=\"\(offset)\">\(DashboardFormat.number(line.values[index]))</td>"
                if let before = line.previousValues {
                    cells +=
                        "<td class=\"previous\">\(DashboardFormat.number(index < before.count ? before[index] : nil))</td>"
                }
            }
            return "<tr><th scope=\"row\">\(labels[index])</th>\(cells)</tr>"
        }
        var totals = HTML.empty
        for line in result.lines {
            totals += "<td>\(DashboardFormat.number(line.aggregate))</td>"
            if line.previousValues != nil {
                totals += "<td class=\"previous\">\(DashboardFormat.number(line.previousAggregate))</td>"
            }
        }
        let caption = "Per \(insight.series[0].query.interval.rawValue); the last row is the whole range"
        return DashboardLayout.table(
            caption: caption, head: head,
            rows: rows + ["<tr class=\"total\"><th scope=\"row\">Whole range</th>\(totals)</tr>"],
            id: "trend", empty: "")
    }

    private static func csv(_ result: TrendInsightResult, _ insight: TrendInsight) -> DashboardCSV {
        var header = ["start"]
        for line in result.lines {
            header.append(name(line, insight))
            if line.previousValues != nil { header.append("\(name(line, insight)) (period before)") }
        }
        func text(_ value: Double?) -> String {
            guard let value else { return "" }
            return value == value.rounded() && abs(value) < 9e15 ? String(Int(value)) : String(value)
        }
        let rows = result.starts.indices.map { index -> [String] in
            var row = [Timestamp.format(result.starts[index])]
            for line in result.lines {
                row.append(text(line.values[index]))
                if let before = line.previousValues { row.append(text(index < before.count ? before[index] : nil)) }
            }
            return row
        }
        return DashboardCSV(name: "trend-\(insight.series[0].query.event)", header: header, rows: rows)
    }

    /// A point's label: its local date, with the time by hours.
    static func label(_ date: Date, _ query: TrendQuery) -> String {
        let time = Timestamp.milliseconds(date)
        return query.interval == .hour ? query.range.calendar.minute(of: time) : query.range.calendar.date(of: time)
    }
}

/// `/dashboard/retention`: cohorts by their first start event, and the share of each that came
/// back in each later interval.
enum RetentionPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let definitions = try await context.services.query.definitions(source: context.source, limit: 1000)
        let form =
            AnalyticsForm.form(
                context, path: "/dashboard/retention", label: "Retention",
                fields: """
                    \(AnalyticsForm.field(context, "start", "Cohort event", hint: "Such as signup", list: "event-names"))
                    \(AnalyticsForm.field(context, "return", "Return event", hint: "The same as the cohort event when empty", list: "event-names"))
                    \(AnalyticsForm.select(context, "interval", "Per", ["day", "week", "month"], default: "day"))
                    \(AnalyticsForm.field(context, "periods", "Periods", hint: "1 to 60; 14 days or 12 weeks when empty"))
                    \(AnalyticsForm.range(context))
                    """, submit: "Show") + TrendsForm.datalists(definitions)
        guard context.parameter("start") != nil else {
            return DashboardPage(
                title: "Retention", section: "/dashboard/retention",
                body: "\(form)<p class=\"empty\">Name a cohort event to see who comes back.</p>")
        }
        let parameters = try AnalyticsForm.parameters(context)
        let query = try AnalyticsForm.read { () throws(CollectorError) in try parameters.retention() }
        let result = try await context.services.query.retention(source: context.source, query, now: context.now)
        let periods = Array(0...query.periods)
        let rows = result.cohorts.map { cohort -> HTML in
            let cells = periods.map { period -> HTML in
                guard period < cohort.returned.count else { return "<td></td>" }
                // The heatmap: a shade per tenth of the cohort that came back.
                let share = cohort.size == 0 ? nil : cohort.shares[period]
                let shade: HTML = share.map { " heat heat-\(Int(($0 * 10).rounded()))" } ?? ""
                return
                    "<td class=\"share\(shade)\" title=\"\(cohort.returned[period]) of \(cohort.size)\">\(DashboardFormat.percent(share))</td>"
            }
            return
                "<tr><th scope=\"row\">\(query.range.calendar.date(of: Timestamp.milliseconds(cohort.start)))</th><td>\(DashboardFormat.number(cohort.size))</td>\(cells)</tr>"
        }
        let table = DashboardLayout.table(
            caption:
                "Share of each cohort doing \(query.returnEvent), per \(query.interval.rawValue) after their first \(query.startEvent)",
            head: ["Cohort (\(query.range.calendar.identifier))", "People"]
                + periods.map { "\(query.interval.rawValue) \($0)" }, rows: rows,
            id: "retention", empty: "")
        let csv = DashboardCSV(
            name: "retention", header: ["cohort", "people"] + periods.map { "\(query.interval.rawValue)\($0)" },
            rows: result.cohorts.map { cohort in
                [Timestamp.format(cohort.start), String(cohort.size)] + cohort.returned.map { String($0) }
            })
        let scale = (0...10).map { step -> HTML in "<span class=\"heat heat-\(step)\"></span>" }
        let body: HTML = """
            \(form)
            <p class="heat-scale" aria-hidden="true">0 %\(scale)100 %</p>
            \(AnalyticsForm.partialNotice(result.partial))
            \(table)
            \(DashboardLayout.csvLink(context, path: "/dashboard/retention"))
            """
        return DashboardPage(title: "Retention", section: "/dashboard/retention", body: body, csv: csv)
    }
}
