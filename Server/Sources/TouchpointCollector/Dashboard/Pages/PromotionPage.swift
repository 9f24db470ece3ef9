/// `/dashboard/promotion`: impressions, taps and click-through per promoted app (with the apps
/// that promoted it) and per promoting app.
enum PromotionPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let results = try await context.services.query.promoResults(source: context.source)
        var promotedRows: [HTML] = []
        var byPromoting: [String: PromoCounts] = [:]
        for result in results {
            promotedRows.append(
                """
                <tr class="promoted" data-app="\(result.appID)"><th scope="row">\(result.appID)</th><td>all promoting apps</td>\
                <td class="impressions">\(result.impressions)</td><td class="taps">\(result.taps)</td>\
                <td class="ctr">\(DashboardFormat.percent(result.clickThrough))</td></tr>
                """)
            for (promoting, counts) in result.byPromotingApp.sorted(by: { $0.key < $1.key }) {
                promotedRows.append(
                    """
                    <tr class="pair"><td></td><td>\(Self.name(promoting))</td><td>\(counts.impressions)</td>\
                    <td>\(counts.taps)</td><td>\(DashboardFormat.percent(counts.clickThrough))</td></tr>
                    """)
                var total = byPromoting[promoting, default: PromoCounts()]
                total.impressions += counts.impressions
                total.taps += counts.taps
                byPromoting[promoting] = total
            }
        }
        let promotingRows = byPromoting.sorted { $0.key < $1.key }.map { promoting, counts -> HTML in
            """
            <tr data-app="\(promoting)"><th scope="row">\(Self.name(promoting))</th><td class="impressions">\(counts.impressions)</td>\
            <td class="taps">\(counts.taps)</td><td class="ctr">\(DashboardFormat.percent(counts.clickThrough))</td></tr>
            """
        }
        let bars = results.map { SVGChart.Bar(label: $0.appID, value: $0.taps) }
        let chart: HTML =
            bars.isEmpty
            ? .empty
            : SVGChart.rows(
                bars, title: "Taps per promoted app",
                description: results.map { "\($0.appID): \($0.taps) taps of \($0.impressions) impressions" }
                    .joined(separator: "; "), id: "taps-chart")
        let promotedTable = DashboardLayout.table(
            caption: "Per promoted app (and the apps that showed it)",
            head: ["Promoted app", "Shown in", "Impressions", "Taps", "Click-through"], rows: promotedRows,
            id: "promoted-apps", empty: "")
        let promotingTable = DashboardLayout.table(
            caption: "Per promoting app", head: ["Promoting app", "Impressions", "Taps", "Click-through"],
            rows: promotingRows, id: "promoting-apps", empty: "")
        let body: HTML =
            results.isEmpty
            ? "<p class=\"empty\">No promo_impression or promo_tap events yet.</p>"
            : """
            \(chart)
            \(promotedTable)
            \(promotingTable)
            \(DashboardLayout.csvLink(context, path: "/dashboard/promotion"))
            """
        var csvRows: [[String]] = []
        for result in results {
            for (promoting, counts) in result.byPromotingApp.sorted(by: { $0.key < $1.key }) {
                csvRows.append([
                    result.appID, promoting, String(counts.impressions), String(counts.taps),
                    counts.clickThrough.map { String($0) } ?? "",
                ])
            }
        }
        let csv = DashboardCSV(
            name: "promotion", header: ["promotedApp", "promotingApp", "impressions", "taps", "clickThrough"],
            rows: csvRows)
        return DashboardPage(title: "Promotion", section: "/dashboard/promotion", body: body, csv: csv)
    }

    private static func name(_ app: String) -> String { app.isEmpty ? "(not given)" : app }
}
