import Foundation
import HTTPTypes
import TouchpointCore

/// `/dashboard/cohorts`: the saved cohorts with their sizes, and a form to define one: people who
/// did an event at least so many times in the last days, and whose trait matches.
enum CohortsPage {
    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        let cohorts = try await context.services.saved.cohorts(source: context.source)
        var rows: [HTML] = []
        for cohort in cohorts {
            let size = try await context.services.query.members(source: context.source, of: cohort).count
            rows.append(
                """
                <tr data-cohort="\(String(cohort.id))"><th scope="row"><a href="\(context.link("/dashboard/cohorts/\(cohort.id)"))">\(cohort.name)</a></th>\
                <td>\(conditions(cohort))</td><td class="size">\(size)</td></tr>
                """)
        }
        let table = DashboardLayout.table(
            caption: "Cohorts: who meets each one now", head: ["Cohort", "People who", "People"], rows: rows,
            id: "cohorts", empty: "No cohorts yet: define one below.")
        let body: HTML = """
            \(table)
            <h2 id="new-cohort">A new cohort</h2>
            \(form(context, action: context.link("/dashboard/cohorts"), cohort: nil, submit: "Save the cohort"))
            """
        return DashboardPage(title: "Cohorts", section: "/dashboard/cohorts", body: body)
    }

    /// A cohort's conditions as a sentence.
    static func conditions(_ cohort: Cohort) -> String {
        cohort.conditions.map(\.description).joined(separator: ", and ")
    }

    /// The form that defines a cohort: its name, an event condition and a trait condition (the
    /// API takes up to ten of either).
    static func form(_ context: DashboardPageContext, action: String, cohort: Cohort?, submit: String) -> HTML {
        var performed: (event: String, times: Int, days: Int)?
        var trait: PropertyFilter?
        for condition in cohort?.conditions ?? [] {
            switch condition {
            case .performed(let event, let times, let days): if performed == nil { performed = (event, times, days) }
            case .trait(let filter): if trait == nil { trait = filter }
            }
        }
        return """
            <form method="post" action="\(action)" class="filters" aria-labelledby="new-cohort">
            <p><label for="cohort-name">Name</label><input id="cohort-name" name="name" value="\(cohort?.name ?? "")" required maxlength="200" autocomplete="off"></p>
            \(InsightFields.event("event", "Did the event", value: performed?.event, hint: "Leave empty for traits alone"))
            <p><label for="times">At least (times)</label><input id="times" name="times" type="number" min="1" value="\(performed?.times ?? 1)"></p>
            <p><label for="days">In the last (days)</label><input id="days" name="days" type="number" min="1" value="\(performed?.days ?? 30)"></p>
            \(InsightFields.filter("trait", 1, trait, label: "And the trait"))
            \(InsightFields.eventNames(context))
            <p class="actions"><button type="submit">\(submit)</button></p>
            </form>
            """
    }

    /// The conditions the form defines.
    /// - Throws: ``CollectorError`` naming the field that cannot be used.
    static func conditions(_ fields: [String: String]) throws -> [CohortCondition] {
        var conditions: [CohortCondition] = []
        func number(_ name: String, _ bounds: ClosedRange<Int>) throws(CollectorError) -> Int {
            let text = fields[name]?.trimmingCharacters(in: .whitespaces) ?? ""
            guard let value = Int(text), bounds.contains(value) else {
                throw CollectorError(
                    .invalidRequest, "\(name): expected \(bounds.lowerBound) to \(bounds.upperBound), got \"\(text)\"",
                    path: name)
            }
            return value
        }
        if let event = fields["event"]?.trimmingCharacters(in: .whitespaces), !event.isEmpty {
            conditions.append(
                .performed(event: event, times: try number("times", 1...100_000), days: try number("days", 1...3650)))
        }
        if let property = fields["trait.property1"]?.trimmingCharacters(in: .whitespaces), !property.isEmpty {
            let name = fields["trait.operator1"] ?? "="
            guard let comparison = PropertyFilter.Operator(name: name) else {
                throw CollectorError(
                    .invalidRequest, "trait.operator1: not a comparison: \"\(name)\"", path: "trait.operator1")
            }
            do {
                let filter = PropertyFilter(
                    property: property, op: comparison, value: fields["trait.value1"] ?? "")
                conditions.append(.trait(try filter.validated()))
            } catch {
                throw CollectorError(.invalidRequest, "trait.property1: \(error.message)", path: "trait.property1")
            }
        }
        guard !conditions.isEmpty else {
            throw CollectorError(.invalidRequest, "event: name an event, a trait, or both", path: "event")
        }
        return conditions
    }
}

/// `/dashboard/cohorts/:cohortId`: one cohort: who is in it now, its definition to change, and
/// the insights of its people.
enum CohortPage {
    static let pageSize = 100

    static func render(_ context: DashboardPageContext) async throws -> DashboardPage {
        guard let id = context.pathParameters["cohortId"].flatMap({ Int64($0) }),
            let cohort = try await context.services.storage.cohorts(source: context.source, id: id).first
        else {
            return DashboardPage(
                title: "Unknown cohort", section: "/dashboard/cohorts",
                body: "<p class=\"empty\">No such cohort in this source.</p>", status: .notFound)
        }
        let found = try await context.services.query.members(
            source: context.source, of: cohort, page: context.page(pageSize))
        let rows = found.page.items.map { member -> HTML in
            let name: HTML =
                member.isUser
                ? "<a href=\"\(context.link("/dashboard/people/" + QueryParameters.encoded(member.id)))\">\(member.id)</a>"
                : "\(member.id) <span class=\"meta\">(anonymous)</span>"
            return
                "<tr><th scope=\"row\">\(name)</th><td>\(member.lastSeen.map(DashboardFormat.time) ?? "–")</td></tr>"
        }
        let next = found.page.nextCursor.map { context.link("/dashboard/cohorts/\(id)", [("cursor", $0)]) }
        let links = InsightKind.allCases.map { kind -> HTML in
            "<li><a href=\"\(context.link(kind.page, [("cohort", String(id))]))\">\(kind.label)</a></li>"
        }
        let body: HTML = """
            <p>People who \(CohortsPage.conditions(cohort)).</p>
            <p class="figure"><span class="number" id="cohort-size">\(found.size)</span> people now</p>
            \(DashboardLayout.table(
                caption: "Members, by id (times in UTC)", head: ["Person", "Last seen"], rows: rows, id: "members",
                empty: "No one meets this cohort now."))
            \(DashboardLayout.nextPage(next, label: "More members"))
            <h2>Insights of these people</h2>
            <ul class="links">\(links)</ul>
            <h2 id="new-cohort">Change the cohort</h2>
            \(CohortsPage.form(context, action: context.link("/dashboard/cohorts/\(id)"), cohort: cohort, submit: "Save the changes"))
            <form method="post" action="\(context.link("/dashboard/cohorts/\(id)"))" class="inline">
            <input type="hidden" name="action" value="delete"><button type="submit" class="danger">Delete the cohort</button>
            </form>
            """
        return DashboardPage(title: cohort.name, section: "/dashboard/cohorts", body: body)
    }
}
