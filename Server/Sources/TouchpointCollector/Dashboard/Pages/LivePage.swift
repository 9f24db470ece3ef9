/// `/dashboard/live`: events appear as the collector stores them (server-sent events from
/// `/dashboard/live/events`, read by the dashboard's script).
enum LivePage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let table = DashboardLayout.table(
            caption: "Stored events, newest first (times in UTC)",
            head: ["Time", "Event", "User", "Session", "Properties"],
            rows: [], id: "live-events", empty: "")
        let body: HTML = """
            <p id="live-status" role="status" data-stream="\(context.link("/dashboard/live/events"))">\
            Connecting… (this page needs JavaScript to follow new events)</p>
            \(table)
            """
        return DashboardPage(title: "Live", section: "/dashboard/live", body: body)
    }
}
