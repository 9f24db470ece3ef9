import Foundation
import HTTPTypes
import TouchpointCore

/// `/dashboard/insights/:insightId`: a saved insight drawn now, with forms to rename it, put it on
/// a dashboard, or delete it; and the box that saves the insight an insight page shows.
enum InsightPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        guard let id = context.pathParameters["insightId"].flatMap({ Int64($0) }),
            let insight = try await context.services.storage.insights(source: context.source, id: id).first
        else {
            return DashboardPage(
                title: "Unknown insight", section: "/dashboard/boards",
                body: "<p class=\"empty\">No such saved insight in this source.</p>", status: .notFound)
        }
        let dashboards = try await context.services.saved.dashboards(source: context.source)
        let action = context.link("/dashboard/insights/\(id)")
        var choices: HTML = ""
        for board in dashboards where !board.insights.contains(id) {
            choices += "<option value=\"\(String(board.id))\">\(board.name)</option>"
        }
        choices += "<option value=\"new\">A new dashboard…</option>"
        let on = dashboards.filter { $0.insights.contains(id) }.map { board -> HTML in
            "<li><a href=\"\(context.link("/dashboard/boards/\(board.id)"))\">\(board.name)</a></li>"
        }
        let parameters = insight.parameters.sorted { $0.key < $1.key }.map { name, value -> HTML in
            "<div><dt>\(name)</dt><dd><code>\(value)</code></dd></div>"
        }
        let onBoards: HTML = on.isEmpty ? "" : "<p>On the dashboards:</p><ul class=\"links\">\(on)</ul>"
        let body: HTML = """
            <dl class="facts"><div><dt>Kind</dt><dd>\(insight.kind.label)</dd></div>\(parameters)</dl>
            <p><a href="\(editor(context, insight))" id="open-insight">Open it to change it</a> · the query API's \
            <code>\(insight.queryURL)</code></p>
            <section class="tile" data-insight="\(String(id))">\(await tile(context, insight))</section>
            \(onBoards)
            <h2>Put it on a dashboard</h2>
            <form method="post" action="\(action)" class="filters" aria-label="Put it on a dashboard">
            <input type="hidden" name="action" value="add">
            <p><label for="dashboard">Dashboard</label><select id="dashboard" name="dashboard">\(choices)</select></p>
            <p><label for="dashboard-name">A new dashboard's name</label><input id="dashboard-name" name="dashboardName" maxlength="200" autocomplete="off"></p>
            <p class="actions"><button type="submit">Add it</button></p>
            </form>
            <h2>Rename or delete it</h2>
            <form method="post" action="\(action)" class="inline" aria-label="Rename the insight">
            <input type="hidden" name="action" value="rename">
            <label for="insight-name">Name</label><input id="insight-name" name="name" value="\(insight.name)" required maxlength="200">
            <button type="submit">Rename</button>
            </form>
            <form method="post" action="\(action)" class="inline" aria-label="Delete the insight">
            <input type="hidden" name="action" value="delete"><button type="submit" class="danger">Delete it</button>
            </form>
            """
        return DashboardPage(title: insight.name, section: "/dashboard/boards", body: body)
    }

    /// The insight's page with its parameters, which knows it came from the saved insight.
    static func editor(_ context: DashboardPageContext, _ insight: SavedInsight) -> String {
        context.link(
            insight.kind.page,
            insight.parameters.sorted { $0.key < $1.key }.map { ($0.key, Optional($0.value)) } + [
                ("insight", String(insight.id))
            ])
    }

    /// The insight drawn by its page, without the page's form: a dashboard's tile. A problem (a
    /// cohort since deleted, say) is shown in its place.
    static func tile(_ context: DashboardPageContext, _ insight: SavedInsight) async -> HTML {
        guard let render = DashboardRoutes.pages.first(where: { $0.path == insight.kind.page })?.render else {
            return DashboardLayout.problem("This kind of insight cannot be shown.")
        }
        var tileContext = DashboardPageContext(
            services: context.services, source: context.source, parameters: insight.parameters, now: context.now,
            pathParameters: [:])
        tileContext.isTile = true
        do {
            return try await render(tileContext).body
        } catch let error as DashboardInputError {
            return DashboardLayout.problem("\(error.parameter): \(error.message)")
        } catch let error as CollectorError {
            return DashboardLayout.problem(error.message)
        } catch {
            return DashboardLayout.problem("This insight cannot be shown now: \(error)")
        }
    }

    /// The box under an insight page's answer that saves it with a name (or, opened from a saved
    /// insight, keeps the changes there).
    static func saveBox(_ context: DashboardPageContext, kind: InsightKind, parameters: [String: String]) async throws
        -> HTML
    {
        let query = SavedInsight.queryString(parameters)
        var update = HTML.empty
        if let id = context.parameter("insight").flatMap({ Int64($0) }),
            let saved = try await context.services.storage.insights(source: context.source, id: id).first,
            saved.kind == kind
        {
            update = """
                <form method="post" action="\(context.link("/dashboard/insights/\(id)"))" class="inline" aria-label="Keep the changes">
                <input type="hidden" name="action" value="update"><input type="hidden" name="parameters" value="\(query)">
                <button type="submit" id="update-insight">Keep these changes in “\(saved.name)”</button>
                </form>
                """
        }
        return """
            <section class="save" aria-labelledby="save-title">
            <h2 id="save-title">Save this insight</h2>
            \(update)
            <form method="post" action="\(context.link("/dashboard/insights"))" class="inline" aria-label="Save this insight">
            <input type="hidden" name="kind" value="\(kind.rawValue)"><input type="hidden" name="parameters" value="\(query)">
            <label for="save-name">Name</label><input id="save-name" name="name" required maxlength="200" autocomplete="off">
            <button type="submit" id="save-insight">Save</button>
            </form>
            </section>
            """
    }
}
