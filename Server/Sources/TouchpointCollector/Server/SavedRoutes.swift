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

/// A request's JSON object body, with its members read and refused by name.
struct JSONBody {
    let members: [String: JSONValue]

    init(_ request: Request) async throws {
        let body = try await RequestBodyReader.read(request, limit: 64 * 1024)
        let json: JSONValue
        do {
            json = try JSONParser.parse(Array(buffer: body))
        } catch {
            throw CollectorError(.invalidJSON, "body: \(error)")
        }
        guard case .object(let members) = json else {
            throw CollectorError(.invalidRequest, "body: expected an object, found \(json.typeName)")
        }
        self.members = members
    }

    /// An optional string member.
    func string(_ name: String) throws -> String? {
        guard let value = members[name] else { return nil }
        guard case .string(let text) = value else {
            throw CollectorError(.invalidRequest, "\(name): expected a string, found \(value.typeName)", path: name)
        }
        return text
    }

    /// An optional array of numbers.
    func ids(_ name: String) throws -> [Int64]? {
        guard let value = members[name] else { return nil }
        guard case .array(let items) = value else {
            throw CollectorError(
                .invalidRequest, "\(name): expected an array of numbers, found \(value.typeName)", path: name)
        }
        return try items.enumerated().map { index, item in
            guard let number = item.intValue, item.doubleValue == Double(number) else {
                throw CollectorError(
                    .invalidRequest, "\(name)[\(index)]: expected a number, found \(item.typeName)",
                    path: "\(name)[\(index)]")
            }
            return Int64(number)
        }
    }

    /// The optional `parameters`: an object of strings, or a query string (`steps=a,b&window=1d`).
    func parameters() throws -> [String: String]? {
        switch members["parameters"] {
        case nil: return nil
        case .string(let text)?:
            return DashboardFormat.formFields(text.hasPrefix("?") ? String(text.dropFirst()) : text)
        case .object(let values)?:
            return try values.mapValues { value in
                switch value {
                case .string(let text): return text
                case .int, .double: return value.jsonString()
                default:
                    throw CollectorError(
                        .invalidRequest, "parameters: expected strings, found \(value.typeName)", path: "parameters")
                }
            }
        case let other?:
            throw CollectorError(
                .invalidRequest, "parameters: expected an object or a query string, found \(other.typeName)",
                path: "parameters")
        }
    }
}
