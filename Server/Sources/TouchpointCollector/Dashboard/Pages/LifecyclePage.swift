import Foundation
import TouchpointCore

/// `/dashboard/lifecycle`: per interval, the people who did an event for the first time, again,
/// back after a pause, and those who stopped.
enum LifecyclePage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let form = AnalyticsForm.form(
            context, path: "/dashboard/lifecycle", label: "Lifecycle",
            fields: """
                \(AnalyticsForm.field(context, "event", "Event"))
                \(AnalyticsForm.select(context, "interval", "Per", ["day", "week", "month"], default: "week"))
                \(AnalyticsForm.range(context))
                """, submit: "Show")
        guard context.parameter("event") != nil else {
            return DashboardPage(
                title: "Lifecycle", section: "/dashboard/lifecycle",
                body: "\(form)<p class=\"empty\">Name an event to see who is new, who stays and who leaves.</p>")
        }
        let parameters = try AnalyticsForm.parameters(context)
        let query = try AnalyticsForm.read { () throws(CollectorError) in try parameters.lifecycle() }
        let result = try await context.services.query.lifecycle(source: context.source, query)
        let calendar = query.range.calendar
        let chart = SVGChart.columns(
            result.intervals.map {
                SVGChart.Bar(
                    label: calendar.date(of: Timestamp.milliseconds($0.start)),
                    value: $0.new + $0.returning + $0.resurrecting)
            },
            title: "People who did \(query.event) per \(query.interval.rawValue)",
            description: result.intervals.map {
                "\(calendar.date(of: Timestamp.milliseconds($0.start))): \($0.new) new, \($0.returning) returning, \($0.resurrecting) resurrecting, \($0.dormant) dormant"
            }.joined(separator: "; "), id: "lifecycle-chart")
        let rows = result.intervals.map { interval -> HTML in
            """
            <tr><th scope="row">\(calendar.date(of: Timestamp.milliseconds(interval.start)))</th>\
            <td class="new">\(interval.new)</td><td class="returning">\(interval.returning)</td>\
            <td class="resurrecting">\(interval.resurrecting)</td><td class="dormant">\(interval.dormant)</td></tr>
            """
        }
        let table = DashboardLayout.table(
            caption: "Lifecycle of \(query.event) per \(query.interval.rawValue)",
            head: [
                "\(query.interval.rawValue.capitalized) (\(calendar.identifier))", "New", "Returning", "Resurrecting",
                "Dormant",
            ], rows: rows, id: "lifecycle", empty: "")
        let csv = DashboardCSV(
            name: "lifecycle-\(query.event)", header: ["start", "new", "returning", "resurrecting", "dormant"],
            rows: result.intervals.map { interval in
                [
                    Timestamp.format(interval.start), String(interval.new), String(interval.returning),
                    String(interval.resurrecting), String(interval.dormant),
                ]
            })
        let body: HTML = """
            \(form)
            \(AnalyticsForm.partialNotice(result.partial))
            \(chart)
            \(table)
            \(DashboardLayout.csvLink(context, path: "/dashboard/lifecycle"))
            """
        return DashboardPage(title: "Lifecycle", section: "/dashboard/lifecycle", body: body, csv: csv)
    }
}
