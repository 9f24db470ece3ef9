import Foundation
import HTTPTypes
import Hummingbird
import TouchpointCore

/// Saved cohorts, insights and dashboards (admin token; `?source=` picks the source):
/// `/v1/cohorts`, `/v1/insights`, `/v1/dashboards`, each listed, read, created (`POST`), changed
/// (`PUT`, the members sent replace the stored ones) and deleted. See ``SavedLibrary``.
enum SavedRoutes {
    static func register(on routes: CollectorRouteTable, services: CollectorServices) {
        let saved = services.saved
        let query = services.query

        // {"name": "Power users", "conditions": [{"event": "open", "atLeast": 3, "days": 7}, {"trait": "plan", "operator": "=", "value": "pro"}]}
        routes.get("/v1/cohorts", access: .admin) { request, _ in
            let items = try await saved.cohorts(source: try services.adminSource(request))
            return Response.json(.object(["items": .array(items.map(\.json))]))
        }
        routes.post("/v1/cohorts", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let body = try await JSONBody(request)
            let cohort = try await saved.createCohort(
                source: source, name: try body.string("name") ?? "",
                conditions: try CohortCondition.parseList(body.members["conditions"]))
            return Response.json(cohort.json, status: .created)
        }
        routes.get("/v1/cohorts/:id", access: .admin) { request, context in
            let source = try services.adminSource(request)
            let cohort = try await saved.cohort(source: source, id: try id(context, "cohort"))
            let people = try await query.members(source: source, of: cohort)
            var members = cohort.json.objectValue ?? [:]
            members["size"] = .int(people.count)
            return Response.json(.object(members))
        }
        routes.get("/v1/cohorts/:id/members", access: .admin) { request, context in
            let source = try services.adminSource(request)
            let cohort = try await saved.cohort(source: source, id: try id(context, "cohort"))
            let found = try await query.members(source: source, of: cohort, page: try QueryRoutes.pageRequest(request))
            var members = found.page.json(\.json).objectValue ?? [:]
            members["size"] = .int(found.size)
            return Response.json(.object(members))
        }
        routes.put("/v1/cohorts/:id", access: .admin) { request, context in
            let body = try await JSONBody(request)
            let conditions = try body.members["conditions"].map { try CohortCondition.parseList($0) }
            let cohort = try await saved.updateCohort(
                source: try services.adminSource(request), id: try id(context, "cohort"), name: try body.string("name"),
                conditions: conditions)
            return Response.json(cohort.json)
        }
        routes.delete("/v1/cohorts/:id", access: .admin) { request, context in
            let id = try id(context, "cohort")
            try await saved.deleteCohort(source: try services.adminSource(request), id: id)
            return Response.json(.object(["id": .int(Int(id)), "deleted": true]))
        }

        // {"name": "Checkout funnel", "kind": "funnels", "parameters": {"steps": "view,buy", "window": "1d"}}
        routes.get("/v1/insights", access: .admin) { request, _ in
            let items = try await saved.insights(source: try services.adminSource(request))
            return Response.json(.object(["items": .array(items.map(\.json))]))
        }
        routes.post("/v1/insights", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let body = try await JSONBody(request)
            let kindName = try body.string("kind") ?? ""
            guard let kind = InsightKind(rawValue: kindName) else {
                throw CollectorError(
                    .invalidRequest,
                    "kind: expected \(InsightKind.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(kindName)\"",
                    path: "kind")
            }
            let insight = try await saved.createInsight(
                source: source, name: try body.string("name") ?? "", kind: kind,
                parameters: try body.parameters() ?? [:])
            return Response.json(insight.json, status: .created)
        }
        routes.get("/v1/insights/:id", access: .admin) { request, context in
            Response.json(
                try await saved.insight(source: try services.adminSource(request), id: try id(context, "insight")).json)
        }
        routes.put("/v1/insights/:id", access: .admin) { request, context in
            let body = try await JSONBody(request)
            let insight = try await saved.updateInsight(
                source: try services.adminSource(request), id: try id(context, "insight"),
                name: try body.string("name"), parameters: try body.parameters())
            return Response.json(insight.json)
        }
        routes.delete("/v1/insights/:id", access: .admin) { request, context in
            let id = try id(context, "insight")
            try await saved.deleteInsight(source: try services.adminSource(request), id: id)
            return Response.json(.object(["id": .int(Int(id)), "deleted": true]))
        }

        // {"name": "Growth", "insights": [3, 1, 2]}
        routes.get("/v1/dashboards", access: .admin) { request, _ in
            let items = try await saved.dashboards(source: try services.adminSource(request))
            return Response.json(.object(["items": .array(items.map(\.json))]))
        }
        routes.post("/v1/dashboards", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let body = try await JSONBody(request)
            let dashboard = try await saved.createDashboard(
                source: source, name: try body.string("name") ?? "", insights: try body.ids("insights") ?? [])
            return Response.json(dashboard.json, status: .created)
        }
        routes.get("/v1/dashboards/:id", access: .admin) { request, context in
            let source = try services.adminSource(request)
            let dashboard = try await saved.dashboard(source: source, id: try id(context, "dashboard"))
            let insights = Dictionary(
                uniqueKeysWithValues: try await saved.insights(source: source).map { ($0.id, $0) })
            var members = dashboard.json.objectValue ?? [:]
            members["items"] = .array(dashboard.insights.compactMap { insights[$0]?.json })
            return Response.json(.object(members))
        }
        routes.put("/v1/dashboards/:id", access: .admin) { request, context in
            let body = try await JSONBody(request)
            let dashboard = try await saved.updateDashboard(
                source: try services.adminSource(request), id: try id(context, "dashboard"),
                name: try body.string("name"), insights: try body.ids("insights"))
            return Response.json(dashboard.json)
        }
        routes.delete("/v1/dashboards/:id", access: .admin) { request, context in
            let id = try id(context, "dashboard")
            try await saved.deleteDashboard(source: try services.adminSource(request), id: id)
            return Response.json(.object(["id": .int(Int(id)), "deleted": true]))
        }
    }

    /// The path's `:id`, a saved thing's number.
    static func id(_ context: CollectorRequestContext, _ what: String) throws -> Int64 {
        let text = try context.pathParameter("id")
        guard let id = Int64(text), id > 0 else {
            throw CollectorError(.notFound, "no \(what) \"\(text)\" (expected its number)")
        }
        return id
    }
}
