import Foundation
import TouchpointCore

/// `/dashboard/trends`: an event's count per interval, as a chart and a table, optionally broken
/// down by a property's top values.
enum TrendsPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let form = AnalyticsForm.form(
            context, path: "/dashboard/trends", label: "Trend",
            fields: """
                \(AnalyticsForm.field(context, "event", "Event"))
                \(AnalyticsForm.select(context, "interval", "Per", ["hour", "day", "week", "month"], default: "day"))
                \(AnalyticsForm.field(context, "breakdown", "Break down by property", hint: "Optional, such as plan"))
                \(AnalyticsForm.select(context, "math", "Active people (daily, weekly, monthly)", ["", "dau", "wau", "mau"], default: ""))
                \(AnalyticsForm.range(context))
                """, submit: "Show")
        guard context.parameter("event") != nil else {
            return DashboardPage(
                title: "Trends", section: "/dashboard/trends",
                body: "\(form)<p class=\"empty\">Name an event to see how often it happens.</p>")
        }
        let parameters = try AnalyticsForm.parameters(context)
        let query = try AnalyticsForm.read { () throws(CollectorError) in try parameters.trend() }
        let result = try await context.services.query.trend(source: context.source, query)
        let series = result.series
        func name(_ series: TrendSeries) -> String { series.isOther ? "other" : series.value ?? "(not set)" }
        let chart = SVGChart.columns(
            result.totals.map { SVGChart.Bar(label: label($0.start, query), value: $0.count) },
            title: "\(query.event) per \(query.interval.rawValue)",
            description:
                "From \(DashboardFormat.time(result.totals.first?.start ?? context.now)), \(result.totals.map(\.count).reduce(0, +)) events in all",
            id: "trend-chart")
        let active = query.math.map { ["Active people (\($0.rawValue))"] } ?? []
        let head =
            ["Interval (\(query.range.calendar.identifier))", "Events", "People"] + active
            + series.map { "\(query.breakdown ?? ""): \(name($0))" }
        let rows = result.totals.indices.map { index -> HTML in
            let point = result.totals[index]
            let cells = series.map { HTML("<td>\($0.points[index].count)</td>") }
            let activeCell: HTML = point.active.map { "<td class=\"active\">\($0)</td>" } ?? ""
            return
                "<tr><th scope=\"row\">\(label(point.start, query))</th><td>\(point.count)</td><td>\(point.users)</td>\(activeCell)\(cells)</tr>"
        }
        let table = DashboardLayout.table(
            caption: "\(query.event) per \(query.interval.rawValue)", head: head, rows: rows, id: "trend", empty: "")
        let csv = DashboardCSV(
            name: "trend-\(query.event)", header: ["start", "events", "people"] + series.map(name),
            rows: result.totals.indices.map { index in
                [
                    Timestamp.format(result.totals[index].start), String(result.totals[index].count),
                    String(result.totals[index].users),
                ] + series.map { String($0.points[index].count) }
            })
        let body: HTML = """
            \(form)
            \(AnalyticsForm.partialNotice(result.partial))
            \(chart)
            \(table)
            \(DashboardLayout.csvLink(context, path: "/dashboard/trends"))
            """
        return DashboardPage(title: "Trends", section: "/dashboard/trends", body: body, csv: csv)
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
        let form = AnalyticsForm.form(
            context, path: "/dashboard/retention", label: "Retention",
            fields: """
                \(AnalyticsForm.field(context, "start", "Cohort event", hint: "Such as signup"))
                \(AnalyticsForm.field(context, "return", "Return event", hint: "The same as the cohort event when empty"))
                \(AnalyticsForm.select(context, "interval", "Per", ["day", "week", "month"], default: "day"))
                \(AnalyticsForm.field(context, "periods", "Periods", hint: "1 to 60; 14 days or 12 weeks when empty"))
                \(AnalyticsForm.range(context))
                """, submit: "Show")
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
                return
                    "<td title=\"\(cohort.returned[period]) of \(cohort.size)\">\(DashboardFormat.percent(cohort.size == 0 ? nil : cohort.shares[period]))</td>"
            }
            return
                "<tr><th scope=\"row\">\(query.range.calendar.date(of: Timestamp.milliseconds(cohort.start)))</th><td>\(cohort.size)</td>\(cells)</tr>"
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
        let body: HTML = """
            \(form)
            \(AnalyticsForm.partialNotice(result.partial))
            \(table)
            \(DashboardLayout.csvLink(context, path: "/dashboard/retention"))
            """
        return DashboardPage(title: "Retention", section: "/dashboard/retention", body: body, csv: csv)
    }
}
