import Foundation
import TouchpointCore

/// `/dashboard`: events per minute over the last hours, active sessions, and the sources.
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
        let minutes = try await query.eventsPerMinute(
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

        var sourceRows: [HTML] = []
        for source in context.services.sources {
            let sourceCounts = source.id == context.source ? counts : try await query.counts(source: source.id)
            let current: HTML = source.id == context.source ? " aria-current=\"true\"" : ""
            sourceRows.append(
                """
                <tr><th scope="row"><a href="/dashboard?source=\(DashboardFormat.percentEncoded(source.id))"\(current)>\(source.id)</a></th>\
                <td>\(sourceCounts.events)</td><td>\(sourceCounts.sessions)</td></tr>
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
            bars, title: "Events per minute, last \(hours) hours (UTC)",
            description: "\(total) events between \(from) and \(to) UTC.", id: "activity-chart")
        let sourcesTable = DashboardLayout.table(
            caption: "Sources (one per write key)", head: ["Source", "Events", "Sessions"], rows: sourceRows,
            empty: "No sources.")
        let retentionNote: HTML =
            context.services.retention.days[context.source].map {
                "Events and sessions older than \($0) days are deleted."
            } ?? "Every event is kept (no retention set)."
        let body: HTML = """
            <section class="figures" aria-label="Totals">
            <p class="figure"><span class="number" id="active-sessions">\(active)</span> active sessions <small>(an event in the last 30 minutes)</small></p>
            <p class="figure"><span class="number" id="recent-events">\(total)</span> events in the last \(hours) h</p>
            <p class="figure"><span class="number" id="total-events">\(counts.events)</span> events stored, <span id="total-sessions">\(counts.sessions)</span> sessions</p>
            </section>
            <p id="retention">\(retentionNote)</p>
            <section aria-labelledby="activity-heading">
            <h2 id="activity-heading">Events per minute</h2>
            <form method="get" action="/dashboard" class="inline">\(sourceField)
            <label for="hours">Period</label> <select id="hours" name="hours">\(hourOptions)</select>
            <button type="submit">Show</button>
            </form>
            \(chart)
            \(DashboardLayout.csvLink(context, path: "/dashboard"))
            </section>
            <section aria-labelledby="sources-heading">
            <h2 id="sources-heading">Sources</h2>
            \(sourcesTable)
            </section>
            """
        let csv = DashboardCSV(
            name: "events-per-minute", header: ["minute", "events"],
            rows: bars.indices.map { offset in
                [
                    Timestamp.format(Date(timeIntervalSince1970: Double(firstMinute + offset) * 60)),
                    String(bars[offset].value),
                ]
            })
        return DashboardPage(title: "Overview", section: "/dashboard", body: body, csv: csv)
    }
}
