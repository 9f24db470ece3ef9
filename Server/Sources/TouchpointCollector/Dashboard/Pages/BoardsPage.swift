import Foundation
import HTTPTypes
import TouchpointCore

/// `/dashboard/boards`: the saved dashboards and insights, and a form for a new dashboard.
enum BoardsPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let saved = context.services.saved
        let dashboards = try await saved.dashboards(source: context.source)
        let insights = try await saved.insights(source: context.source)
        let boardRows = dashboards.map { board -> HTML in
            """
            <tr data-dashboard="\(String(board.id))"><th scope="row"><a href="\(context.link("/dashboard/boards/\(board.id)"))">\(board.name)</a></th>\
            <td>\(board.insights.count)</td><td>\(DashboardFormat.time(Timestamp.date(milliseconds: board.updatedAt)))</td></tr>
            """
        }
        let insightRows = insights.map { insight -> HTML in
            let boards = dashboards.filter { $0.insights.contains(insight.id) }.map(\.name)
            return """
                <tr data-insight="\(String(insight.id))"><th scope="row"><a href="\(context.link("/dashboard/insights/\(insight.id)"))">\(insight.name)</a></th>\
                <td>\(insight.kind.label)</td><td>\(boards.joined(separator: ", "))</td>\
                <td><a href="\(InsightPage.editor(context, insight))">Open</a></td></tr>
                """
        }
        let body: HTML = """
            \(DashboardLayout.table(
                caption: "Dashboards (times in UTC)", head: ["Dashboard", "Insights", "Changed"], rows: boardRows,
                id: "dashboards", empty: "No dashboards yet."))
            <form method="post" action="\(context.link("/dashboard/boards"))" class="inline" aria-label="A new dashboard">
            <label for="board-name">A new dashboard</label><input id="board-name" name="name" required maxlength="200" autocomplete="off">
            <button type="submit">Create</button>
            </form>
            <h2>Saved insights</h2>
            \(DashboardLayout.table(
                caption: "Saved insights", head: ["Insight", "Kind", "On dashboards", ""], rows: insightRows,
                id: "insights", empty: "No saved insights yet: save one from Trends, Funnels, Retention or Paths."))
            """
        return DashboardPage(title: "Dashboards", section: "/dashboard/boards", body: body)
    }
}

/// `/dashboard/boards/:boardId`: a saved dashboard: its insights in a grid, each drawn from its
/// saved parameters now, with buttons to move or remove it.
enum BoardPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        guard let id = context.pathParameters["boardId"].flatMap({ Int64($0) }),
            let board = try await context.services.storage.dashboards(source: context.source, id: id).first
        else {
            return DashboardPage(
                title: "Unknown dashboard", section: "/dashboard/boards",
                body: "<p class=\"empty\">No such dashboard in this source.</p>", status: .notFound)
        }
        let insights = Dictionary(
            uniqueKeysWithValues: try await context.services.saved.insights(source: context.source).map { ($0.id, $0) })
        let shown = board.insights.compactMap { insights[$0] }
        let tiles = try await withThrowingTaskGroup(of: (Int, HTML).self) { group in
            for (index, insight) in shown.enumerated() {
                group.addTask { (index, await InsightPage.tile(context, insight)) }
            }
            var drawn = Array(repeating: HTML.empty, count: shown.count)
            for try await (index, html) in group { drawn[index] = html }
            return drawn
        }
        let action = context.link("/dashboard/boards/\(id)")
        var grid = HTML.empty
        for (index, insight) in shown.enumerated() {
            let up: HTML = index == 0 ? "" : "<button type=\"submit\" name=\"action\" value=\"up\">Move up</button>"
            let down: HTML =
                index == shown.count - 1
                ? "" : "<button type=\"submit\" name=\"action\" value=\"down\">Move down</button>"
            grid += """
                <section class="tile" data-insight="\(String(insight.id))" aria-labelledby="tile-\(String(insight.id))">
                <h2 id="tile-\(String(insight.id))"><a href="\(context.link("/dashboard/insights/\(insight.id)"))">\(insight.name)</a> \
                <span class="meta">\(insight.kind.label)</span></h2>
                \(tiles[index])
                <form method="post" action="\(action)" class="inline tile-actions"><input type="hidden" name="insight" value="\(String(insight.id))">\
                \(up)\(down)<button type="submit" name="action" value="remove">Remove</button></form>
                </section>
                """
        }
        let empty: HTML =
            shown.isEmpty
            ? "<p class=\"empty\">No insights on this dashboard yet: open a saved insight and add it here.</p>" : ""
        let body: HTML = """
            \(empty)
            <div class="grid" id="board">\(grid)</div>
            <h2>This dashboard</h2>
            <form method="post" action="\(action)" class="inline" aria-label="Rename the dashboard">
            <input type="hidden" name="action" value="rename">
            <label for="board-name">Name</label><input id="board-name" name="name" value="\(board.name)" required maxlength="200">
            <button type="submit">Rename</button>
            </form>
            <form method="post" action="\(action)" class="inline" aria-label="Delete the dashboard">
            <input type="hidden" name="action" value="delete"><button type="submit" class="danger">Delete the dashboard</button>
            </form>
            """
        return DashboardPage(title: board.name, section: "/dashboard/boards", body: body)
    }
}
