import Foundation
import TouchpointCore

/// `/dashboard/stickiness`: per week or month, how many people did an event on 1, 2, … n of its
/// days.
enum StickinessPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let form = AnalyticsForm.form(
            context, path: "/dashboard/stickiness", label: "Stickiness",
            fields: """
                \(AnalyticsForm.field(context, "event", "Event"))
                \(AnalyticsForm.select(context, "interval", "Per", ["week", "month"], default: "week"))
                \(AnalyticsForm.range(context))
                """, submit: "Show")
        guard context.parameter("event") != nil else {
            return DashboardPage(
                title: "Stickiness", section: "/dashboard/stickiness",
                body: "\(form)<p class=\"empty\">Name an event to see on how many days people do it.</p>")
        }
        let parameters = try AnalyticsForm.parameters(context)
        let query = try AnalyticsForm.read { () throws(CollectorError) in try parameters.stickiness() }
        let result = try await context.services.query.stickiness(source: context.source, query)
        let calendar = query.range.calendar
        let width = result.intervals.map(\.people.count).max() ?? 0
        let days = Array(1...max(1, width))
        // The whole range's people per number of days, for the chart.
        var totals = Array(repeating: 0, count: days.count)
        for interval in result.intervals {
            for (offset, people) in interval.people.enumerated() { totals[offset] += people }
        }
        let chart = SVGChart.columns(
            zip(days, totals).map { SVGChart.Bar(label: "\($0) d", value: $1) },
            title: "People by the days of a \(query.interval.rawValue) they did \(query.event)",
            description: zip(days, totals).map { "\($0) days: \($1)" }.joined(separator: "; "), id: "stickiness-chart")
        let rows = result.intervals.map { interval -> HTML in
            let cells = days.map { day -> HTML in
                day <= interval.people.count ? "<td>\(interval.people[day - 1])</td>" : "<td></td>"
            }
            return
                "<tr><th scope=\"row\">\(calendar.date(of: Timestamp.milliseconds(interval.start)))</th><td>\(interval.people.reduce(0, +))</td>\(cells)</tr>"
        }
        let table = DashboardLayout.table(
            caption: "People who did \(query.event) on exactly n days of each \(query.interval.rawValue)",
            head: ["\(query.interval.rawValue.capitalized) (\(calendar.identifier))", "People"]
                + days.map { "\($0) d" },
            rows: rows, id: "stickiness", empty: "")
        let csv = DashboardCSV(
            name: "stickiness-\(query.event)", header: ["start", "people"] + days.map { "days\($0)" },
            rows: result.intervals.map { interval in
                [Timestamp.format(interval.start), String(interval.people.reduce(0, +))]
                    + interval.people.map { String($0) }
            })
        let body: HTML = """
            \(form)
            \(AnalyticsForm.partialNotice(result.partial))
            \(chart)
            \(table)
            \(DashboardLayout.csvLink(context, path: "/dashboard/stickiness"))
            """
        return DashboardPage(title: "Stickiness", section: "/dashboard/stickiness", body: body, csv: csv)
    }
}
