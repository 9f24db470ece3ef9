import Foundation
import HTTPTypes
import TouchpointCore

/// `/dashboard/sessions`: sessions newest first, filtered by user, time and event name.
enum SessionsPage {
    static let pageSize = 50

    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let user = context.parameter("user")
        let event = context.parameter("event")
        var problem: HTML = .empty
        var range = TimeRange()
        do {
            range = TimeRange(from: try context.time("from"), to: try context.time("to"))
        } catch let error as DashboardInputError {
            problem = DashboardLayout.problem("\(error.parameter): \(error.message)")
        }
        let filter = SessionFilter(user: user.map(UserReference.any), range: range, eventName: event)
        let page = try await context.services.query.sessions(
            source: context.source, filter: filter, page: context.page(pageSize))
        let definitions = try await context.services.query.definitions(source: context.source, limit: 1000)
        let rows = page.items.map { session -> HTML in
            let who = session.userId ?? session.anonymousId.map { "anonymous \($0)" } ?? "–"
            return """
                <tr><td><a href="\(context.link("/dashboard/sessions/" + QueryParameters.encoded(session.sessionId)))">\
                <code>\(String(session.sessionId.prefix(8)))</code></a></td>\
                <td class="user">\(who)</td><td>\(DashboardFormat.time(session.firstTimestamp))</td>\
                <td>\(DashboardFormat.time(session.lastTimestamp))</td><td>\(DashboardFormat.number(session.eventCount))</td></tr>
                """
        }
        let next = page.nextCursor.map { cursor in
            context.link(
                "/dashboard/sessions",
                [
                    ("user", user), ("event", event), ("from", context.parameter("from")),
                    ("to", context.parameter("to")), ("cursor", cursor),
                ])
        }
        let sourceField: HTML =
            context.source == CollectorSource.defaultID
            ? "" : "<input type=\"hidden\" name=\"source\" value=\"\(context.source)\">"
        let table = DashboardLayout.table(
            caption: "Sessions, newest first (times in UTC)",
            head: ["Session", "User", "First event", "Last event", "Events"],
            rows: rows, id: "sessions", empty: "No sessions match.")
        let body: HTML = """
            <form method="get" action="/dashboard/sessions" class="filters" aria-label="Filter sessions">\(sourceField)
            <p><label for="user">User or anonymous id</label><input id="user" name="user" value="\(user ?? "")" autocomplete="off"></p>
            <p><label for="event">Contains event</label><input id="event" name="event" list="event-names" value="\(event ?? "")" autocomplete="off"></p>
            <p><label for="from">Active from (\(context.calendar.identifier))</label><input id="from" name="from" type="datetime-local" value="\(context.parameter("from") ?? "")"></p>
            <p><label for="to">Until (\(context.calendar.identifier))</label><input id="to" name="to" type="datetime-local" value="\(context.parameter("to") ?? "")"></p>
            <p class="actions"><button type="submit">Filter</button> <a href="\(context.link("/dashboard/sessions"))">Clear</a></p>
            </form>
            \(TrendsForm.datalists(definitions))
            \(problem)
            \(table)
            \(DashboardLayout.nextPage(next, label: "Older sessions"))
            \(DashboardLayout.csvLink(context, path: "/dashboard/sessions"))
            """
        return DashboardPage(
            title: "Sessions", section: "/dashboard/sessions", body: body,
            status: problem == .empty ? .ok : .badRequest,
            csv: DashboardCSV(
                name: "sessions", header: ["sessionId", "userId", "anonymousId", "firstEvent", "lastEvent", "events"],
                rows: page.items.map { session in
                    [
                        session.sessionId, session.userId ?? "", session.anonymousId ?? "",
                        Timestamp.format(session.firstTimestamp), Timestamp.format(session.lastTimestamp),
                        String(session.eventCount),
                    ]
                }))
    }
}
