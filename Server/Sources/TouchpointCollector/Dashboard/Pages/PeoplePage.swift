import Foundation
import HTTPTypes
import TouchpointCore

/// `/dashboard/people`: users, most recently seen first, searchable by id, merged anonymous id or
/// trait text.
enum PeoplePage {
    static let pageSize = 50

    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let search = context.parameter("q")
        if let search, search.utf8.count > 200 {
            throw DashboardInputError(parameter: "q", message: "longer than 200 bytes")
        }
        let page = try await context.services.query.people(
            source: context.source, search: search, page: context.page(pageSize))
        func trait(_ person: Person, _ names: [String]) -> String {
            for name in names { if let value = person.traits[name] { return DashboardFormat.value(value) } }
            return ""
        }
        let rows = page.items.map { person -> HTML in
            """
            <tr><th scope="row"><a href="\(context.link("/dashboard/people/" + QueryParameters.encoded(person.userId)))">\(person.userId)</a></th>\
            <td>\(trait(person, ["name", "firstName", "username"]))</td><td>\(trait(person, ["email"]))</td>\
            <td>\(DashboardFormat.time(person.firstSeen))</td><td>\(DashboardFormat.time(person.lastSeen))</td>\
            <td>\(person.eventCount)</td></tr>
            """
        }
        let next = page.nextCursor.map { context.link("/dashboard/people", [("q", search), ("cursor", $0)]) }
        let table = DashboardLayout.table(
            caption: "People, most recently seen first (times in UTC)",
            head: ["User", "Name", "Email", "First seen", "Last seen", "Events"], rows: rows, id: "people",
            empty: "No one matches.")
        let form = AnalyticsForm.form(
            context, path: "/dashboard/people", label: "Search people",
            fields: AnalyticsForm.field(
                context, "q", "Search", hint: "A user id, an anonymous id, or text in their traits (an email, say)"),
            submit: "Search")
        let csv = DashboardCSV(
            name: "people", header: ["userId", "name", "email", "firstSeen", "lastSeen", "events", "traits"],
            rows: page.items.map { person in
                [
                    person.userId, trait(person, ["name", "firstName", "username"]), trait(person, ["email"]),
                    Timestamp.format(person.firstSeen), Timestamp.format(person.lastSeen), String(person.eventCount),
                    JSONValue.object(person.traits).jsonString(sortedKeys: true),
                ]
            })
        let body: HTML = """
            \(form)
            \(table)
            \(DashboardLayout.nextPage(next, label: "More people"))
            \(DashboardLayout.csvLink(context, path: "/dashboard/people"))
            """
        return DashboardPage(title: "People", section: "/dashboard/people", body: body, csv: csv)
    }
}

/// `/dashboard/people/:userId`: one person's traits, ids, groups, sessions and latest events.
enum PersonPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let userId = context.pathParameters["userId"] ?? ""
        guard let found = try await context.services.query.person(source: context.source, userId: userId) else {
            return DashboardPage(
                title: "Unknown person", section: "/dashboard/people",
                body: "<p class=\"empty\">No events of user \(userId) in this source.</p>", status: .notFound)
        }
        let person = found.person
        let traitRows = person.traits.sorted { $0.key < $1.key }.map { name, value -> HTML in
            "<tr><th scope=\"row\">\(name)</th><td>\(DashboardFormat.value(value))</td></tr>"
        }
        let traits = DashboardLayout.table(
            caption: "Traits (the latest value of each)", head: ["Trait", "Value"], rows: traitRows, id: "traits",
            empty: "")
        let groupRows = person.groups.sorted { $0.key < $1.key }.map { id, traits -> HTML in
            "<tr><th scope=\"row\">\(id)</th><td>\(JSONValue.object(traits).jsonString(sortedKeys: true))</td></tr>"
        }
        let groups = DashboardLayout.table(
            caption: "Groups", head: ["Group", "Traits"], rows: groupRows, id: "groups", empty: "")
        let sessionRows = found.sessions.map { session -> HTML in
            """
            <tr><td><a href="\(context.link("/dashboard/sessions/" + QueryParameters.encoded(session.sessionId)))">\
            <code>\(String(session.sessionId.prefix(8)))</code></a></td><td>\(session.userId ?? "anonymous \(session.anonymousId ?? "")")</td>\
            <td>\(DashboardFormat.time(session.firstTimestamp))</td><td>\(DashboardFormat.time(session.lastTimestamp))</td>\
            <td>\(session.eventCount)</td></tr>
            """
        }
        let sessions = DashboardLayout.table(
            caption: "Newest sessions", head: ["Session", "As", "First event", "Last event", "Events"],
            rows: sessionRows, id: "person-sessions", empty: "")
        let eventRows = found.events.map { event -> HTML in
            "<tr><td>\(DashboardFormat.time(event.timestamp))</td><td>\(event.type)</td><td>\(event.name ?? "")</td></tr>"
        }
        let events = DashboardLayout.table(
            caption: "Latest events of those sessions", head: ["Time", "Type", "Event"], rows: eventRows,
            id: "person-events", empty: "")
        var merged = HTML.empty
        for (offset, id) in person.anonymousIds.enumerated() {
            merged += offset == 0 ? "<code>\(id)</code>" : ", <code>\(id)</code>"
        }
        let ids: HTML =
            person.anonymousIds.isEmpty
            ? "<p>No anonymous id merged into this user.</p>"
            : "<p id=\"anonymous-ids\">Anonymous ids merged into this user: \(merged)</p>"
        let body: HTML = """
            <dl class="facts">
            <div><dt>First seen</dt><dd>\(DashboardFormat.time(person.firstSeen))</dd></div>
            <div><dt>Last seen</dt><dd>\(DashboardFormat.time(person.lastSeen))</dd></div>
            <div><dt>Events as this user</dt><dd>\(person.eventCount)</dd></div>
            </dl>
            \(ids)
            \(traits)
            \(DashboardLayout.csvLink(context, path: "/dashboard/people/" + QueryParameters.encoded(userId)))
            \(groups)
            \(sessions)
            \(events)
            """
        let csv = DashboardCSV(
            name: "person-traits", header: ["trait", "value"],
            rows: person.traits.sorted { $0.key < $1.key }.map { [$0.key, DashboardFormat.value($0.value)] })
        return DashboardPage(title: "Person \(userId)", section: "/dashboard/people", body: body, csv: csv)
    }
}
