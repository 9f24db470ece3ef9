import Foundation
import TouchpointCore

/// `/dashboard/paths`: what people did after (or before) an event, as a tree of the most frequent
/// next (or previous) events, a few steps deep, with the people on each branch.
enum PathsPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let values = try parameters(context)
        var query: PathQuery?
        if values["start"] != nil || values["end"] != nil {
            query = try AnalyticsForm.read { () throws(CollectorError) in
                try AnalyticsParameters(now: context.now, calendar: context.calendar) { values[$0] }.paths()
            }
        }
        let form = AnalyticsForm.form(
            context, path: "/dashboard/paths", label: "Paths", fields: fields(context, query), submit: "Show")
        guard let query else {
            return DashboardPage(
                title: "Paths", section: "/dashboard/paths",
                body: "\(form)<p class=\"empty\">Pick an event to see what people do after it, or before it.</p>")
        }
        let result = try await context.services.query.paths(source: context.source, query)
        var rows: [HTML] = []
        var csvRows: [[String]] = []
        func walk(_ node: PathNode, _ way: [String]) {
            let name = node.isOther ? "other events" : node.event ?? ""
            let path = way + [name]
            if !way.isEmpty {
                rows.append(
                    "<tr><th scope=\"row\">\(path.joined(separator: " → "))</th><td>\(node.people)</td><td>\(node.isOther ? "" : String(node.ended))</td></tr>"
                )
                csvRows.append([
                    path.joined(separator: " > "), String(node.people), node.isOther ? "" : String(node.ended),
                ])
            }
            for child in node.children { walk(child, path) }
        }
        walk(result.root, [])
        let direction = query.direction == .after ? "after" : "before"
        let summary: HTML =
            result.root.people == 0
            ? "<p class=\"empty\">No one did \(query.event) in this range.</p>"
            : """
            <p id="paths-summary">\(result.root.people) people did \(query.event); what they did \(direction) it, \
            \(query.steps) \(query.steps == 1 ? "step" : "steps") \(direction == "after" ? "on" : "back") \
            (within \(AnalyticsForm.duration(Double(query.window / 1000))), a run of one event counted once):</p>
            """
        let table = DashboardLayout.table(
            caption: "People on each way \(direction) \(query.event)", head: ["Way", "People", "Stopped there"],
            rows: rows, id: "paths", empty: "")
        let body: HTML = """
            \(form)
            \(summary)
            <ul class="path-tree" id="path-tree">\(node(result.root, total: result.root.people, depth: 0))</ul>
            \(table)
            \(DashboardLayout.csvLink(context, path: "/dashboard/paths"))
            """
        return DashboardPage(
            title: "Paths", section: "/dashboard/paths", body: body,
            csv: DashboardCSV(name: "paths-\(query.event)", header: ["way", "people", "stopped"], rows: csvRows),
            insight: FunnelsPage.canonical(values))
    }

    /// A node and, nested, where its people went.
    static func node(_ node: PathNode, total: Int, depth: Int) -> HTML {
        let name = node.isOther ? "other events" : node.event ?? ""
        let share = total == 0 ? 0 : Double(node.people) / Double(total)
        let ended: HTML =
            node.isOther || node.ended == 0 ? "" : "<span class=\"path-ended\"> · \(node.ended) stopped here</span>"
        var children = HTML.empty
        for child in node.children { children += self.node(child, total: total, depth: depth + 1) }
        let nested: HTML = node.children.isEmpty ? "" : "<ul>\(children)</ul>"
        let other: HTML = node.isOther ? " data-other=\"true\"" : ""
        return """
            <li class="path-node" data-event="\(node.event ?? "")" data-people="\(node.people)" data-depth="\(depth)"\(other)>\
            <span class="path-label"><span class="path-event">\(name)</span> <span class="path-people">\(node.people)</span> \
            \(node.people == 1 ? "person" : "people") (\(DashboardFormat.percent(share)))\(ended)</span>\
            <svg class="path-bar" viewBox="0 0 100 4" preserveAspectRatio="none" aria-hidden="true">\
            <rect class="bar" width="\(max(share * 100, node.people > 0 ? 0.5 : 0))" height="4"/></svg>\(nested)</li>
            """
    }

    // MARK: Form

    /// The page's parameters as the query API names them: the form's `event` and `direction`
    /// read into `start` or `end`; times as RFC 3339.
    static func parameters(_ context: DashboardPageContext) throws -> [String: String] {
        var values = context.parameters
        for name in ["from", "to"] {
            if let date = try context.time(name) { values[name] = Timestamp.format(date) }
        }
        if values.keys.contains("event") || values.keys.contains("direction") {
            let direction = context.parameter("direction") ?? "after"
            guard let way = PathQuery.Direction(rawValue: direction) else {
                throw DashboardInputError(
                    parameter: "direction", message: "expected after or before, got \"\(direction)\"")
            }
            values["event"] = nil
            values["direction"] = nil
            values["start"] = nil
            values["end"] = nil
            values[way.parameter] = context.parameter("event")
        }
        return values
    }

    static func fields(_ context: DashboardPageContext, _ query: PathQuery?) -> HTML {
        let direction = query?.direction ?? .after
        let directions = PathQuery.Direction.allCases.map { way -> HTML in
            let selected: HTML = way == direction ? " selected" : ""
            return "<option value=\"\(way.rawValue)\"\(selected)>\(way == .after ? "After" : "Before")</option>"
        }
        return """
            <p><label for="direction">What people did</label><select id="direction" name="direction">\(directions)</select></p>
            \(InsightFields.event("event", "Event", value: query?.event ?? context.parameter("event")))
            \(AnalyticsForm.select(context, "steps", "Steps", ["1", "2", "3", "4", "5"], default: "3"))
            \(AnalyticsForm.select(context, "top", "Events per step", ["3", "5", "10", "20"], default: "5"))
            \(InsightFields.duration(context, "window", "Within", default: "1d"))
            \(AnalyticsForm.field(context, "exclude", "Leave out", hint: "Events to skip, comma-separated"))
            \(AnalyticsForm.range(context))
            """
    }
}
