import Foundation
import HTTPTypes
import TouchpointCore

/// `/dashboard/sessions/{id}`: one session's events in order, each with its properties.
enum SessionTimelinePage {
    static let pageSize = 100

    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let sessionId = context.pathParameters["sessionId"] ?? ""
        let page = try await context.services.query.sessionEvents(
            source: context.source, sessionId: sessionId, page: context.page(pageSize))
        guard let first = page.items.first else {
            let status: HTTPTypes.HTTPResponse.Status = context.parameter("cursor") == nil ? .notFound : .ok
            return DashboardPage(
                title: "Session", section: "/dashboard/sessions",
                body: "<p class=\"empty\">No events for session <code>\(sessionId)</code>.</p>",
                status: status)
        }
        let user = page.items.lazy.compactMap(\.userId).first
        let items = page.items.map { event -> HTML in
            let properties = event.properties.sorted { $0.key < $1.key }.map { key, value -> HTML in
                "<div><dt>\(key)</dt><dd>\(DashboardFormat.value(value))</dd></div>"
            }
            let list: HTML = properties.isEmpty ? "<p class=\"none\">No properties.</p>" : "<dl>\(properties)</dl>"
            return """
                <li class="event" data-event="\(event.name ?? event.type)">
                <p><time datetime="\(Timestamp.format(event.timestamp))">\(DashboardFormat.time(event.timestamp))</time> \
                <strong class="name">\(event.name ?? event.type)</strong> <span class="type">\(event.type)</span></p>
                \(list)
                </li>
                """
        }
        let path = "/dashboard/sessions/" + QueryParameters.encoded(sessionId)
        let next = page.nextCursor.map { context.link(path, [("cursor", $0)]) }
        let body: HTML = """
            <dl class="summary">
            <div><dt>Session</dt><dd><code id="session-id">\(sessionId)</code></dd></div>
            <div><dt>User</dt><dd id="session-user">\(user ?? "–")</dd></div>
            <div><dt>Anonymous id</dt><dd>\(first.anonymousId ?? "–")</dd></div>
            </dl>
            <h2>Timeline <small>(UTC)</small></h2>
            <ol class="timeline" id="timeline">\(items)</ol>
            \(DashboardLayout.nextPage(next, label: "Later events"))
            <p><a href="\(context.link("/dashboard/sessions"))">← All sessions</a></p>
            """
        return DashboardPage(title: "Session timeline", section: "/dashboard/sessions", body: body)
    }
}
