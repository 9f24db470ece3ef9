import Foundation
import TouchpointCore

/// `/dashboard`: the events received per minute over the last hours (by when they arrived, so a
/// backfill of old events shows when it comes in), active sessions, the events most seen this
/// week, and the sources.
enum OverviewPage {
    /// A session counts as active when it had an event in the last 30 minutes.
    static let activeWindow: TimeInterval = 30 * 60

    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let query = context.services.query
        var hours = 3
        if let text = context.parameter("hours") {
            guard let value = Int(text), (1...24).contains(value) else {
                throw DashboardInputError(parameter: "hours", message: "expected 1 to 24, got \"\(text)\"")
            }
            hours = value
        }
        // Whole minutes, the current one last.
        let end = (context.now.timeIntervalSince1970 / 60).rounded(.down) * 60 + 60
        let start = end - Double(hours) * 3600
        let minutes = try await query.arrivalsPerMinute(
            source: context.source,
            range: TimeRange(from: Date(timeIntervalSince1970: start), to: Date(timeIntervalSince1970: end)))
        var byMinute: [Int: Int] = [:]
        for entry in minutes { byMinute[Int((entry.minute.timeIntervalSince1970 / 60).rounded())] = entry.count }
        let firstMinute = Int(start / 60)
        let bars = (0..<(hours * 60)).map { offset -> SVGChart.Bar in
            let minute = Date(timeIntervalSince1970: Double(firstMinute + offset) * 60)
            return SVGChart.Bar(
                label: DashboardFormat.minute(minute), value: byMinute[firstMinute + offset] ?? 0,
                detail: DashboardFormat.time(minute))
        }
        let total = bars.reduce(0) { $0 + $1.value }
        let active = try await query.activeSessionCount(
            source: context.source, since: context.now.addingTimeInterval(-activeWindow))
        let counts = try await query.counts(source: context.source)
        let week = TimeRange(from: context.now.addingTimeInterval(-7 * 86_400), to: context.now.addingTimeInterval(60))
        let topEvents = try await query.topEvents(source: context.source, range: week, limit: 10)

        var sourceRows: [HTML] = []
        for source in context.services.sources {
            let sourceCounts = source.id == context.source ? counts : try await query.counts(source: source.id)
            let current: HTML = source.id == context.source ? " aria-current=\"true\"" : ""
            sourceRows.append(
                """
                <tr><th scope="row"><a href="/dashboard?source=\(QueryParameters.encoded(source.id))"\(current)>\(source.id)</a></th>\
                <td>\(DashboardFormat.number(sourceCounts.events))</td><td>\(DashboardFormat.number(sourceCounts.sessions))</td></tr>
                """)
        }
        let hourOptions = [1, 3, 6, 12, 24].map { value -> HTML in
            let selected: HTML = value == hours ? " selected" : ""
            return "<option value=\"\(value)\"\(selected)>\(value) h</option>"
        }
        let sourceField: HTML =
            context.source == CollectorSource.defaultID
            ? "" : "<input type=\"hidden\" name=\"source\" value=\"\(context.source)\">"
        let from = DashboardFormat.time(Date(timeIntervalSince1970: start))
        let to = DashboardFormat.time(Date(timeIntervalSince1970: end))
        let chart = SVGChart.columns(
            bars, title: "Events received per minute, last \(hours) hours (UTC)",
            description: "\(DashboardFormat.number(total)) events received between \(from) and \(to) UTC.",
            id: "activity-chart")
        let topRows = topEvents.map { entry -> HTML in
            """
            <tr data-event="\(entry.name)"><th scope="row"><a href="\(context.link("/dashboard/trends", [("event", entry.name), ("date", DatePreset.last7Days.rawValue)]))">\(entry.name)</a></th>\
            <td class="count">\(DashboardFormat.number(entry.count))</td></tr>
            """
        }
        let topTable = DashboardLayout.table(
            caption: "Events in the last 7 days, by their own time", head: ["Event", "Events"], rows: topRows,
            id: "top-events", empty: "")
        let sourcesTable = DashboardLayout.table(
            caption: "Sources (one per write key)", head: ["Source", "Events", "Sessions"], rows: sourceRows,
            empty: "No sources.")
        let retentionNote: HTML =
            context.services.retention.days[context.source].map {
                "Events and sessions older than \($0) days are deleted."
            } ?? "Every event is kept (no retention set)."
        let body: HTML = """
            <section class="figures" aria-label="Totals">
            <p class="figure"><span class="number" id="active-sessions">\(DashboardFormat.number(active))</span> active sessions <small>(an event in the last 30 minutes)</small></p>
            <p class="figure"><span class="number" id="recent-events">\(DashboardFormat.number(total))</span> events received in the last \(hours) h</p>
            <p class="figure"><span class="number" id="total-events">\(DashboardFormat.number(counts.events))</span> events stored, <span id="total-sessions">\(DashboardFormat.number(counts.sessions))</span> sessions</p>
            </section>
            <p id="retention">\(retentionNote)</p>
            <section aria-labelledby="activity-heading">
            <h2 id="activity-heading">Events received per minute</h2>
            <form method="get" action="/dashboard" class="inline">\(sourceField)
            <label for="hours">Period</label> <select id="hours" name="hours">\(hourOptions)</select>
            <button type="submit">Show</button>
            </form>
            \(chart)
            \(DashboardLayout.csvLink(context, path: "/dashboard"))
            </section>
            <section aria-labelledby="top-events-heading">
            <h2 id="top-events-heading">Most seen this week</h2>
            \(topEvents.isEmpty ? "<p class=\"empty\">No events in the last 7 days.</p>" : topTable)
            </section>
            <section aria-labelledby="sources-heading">
            <h2 id="sources-heading">Sources</h2>
            \(sourcesTable)
            </section>
            """
        let csv = DashboardCSV(
            name: "events-received-per-minute", header: ["minute", "events"],
            rows: bars.indices.map { offset in
                [
                    Timestamp.format(Date(timeIntervalSince1970: Double(firstMinute + offset) * 60)),
                    String(bars[offset].value),
                ]
            })
        return DashboardPage(title: "Overview", section: "/dashboard", body: body, csv: csv)
    }
}
