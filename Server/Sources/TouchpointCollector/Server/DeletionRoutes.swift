import Foundation
import HTTPTypes
import Hummingbird
import TouchpointCore

/// `/v1/admin/deletions` (admin token; `?source=` picks the source): delete a user's data, list
/// the requests, lift a suppression. See ``DeletionService``.
enum DeletionRoutes {
    static func register(on routes: CollectorRouteTable, services: CollectorServices) {
        // {"userIds": [...], "anonymousIds": [...], "suppress": true}
        routes.post("/v1/admin/deletions", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let members = try await JSONBody(request).members
            let userIds = try strings(members["userIds"], "userIds")
            let anonymousIds = try strings(members["anonymousIds"], "anonymousIds")
            var suppress = false
            if let value = members["suppress"] {
                guard case .bool(let flag) = value else {
                    throw CollectorError(
                        .invalidRequest, "suppress: expected true or false, found \(value.typeName)", path: "suppress")
                }
                suppress = flag
            }
            let result = try await services.deletions.delete(
                source: source, userIds: userIds, anonymousIds: anonymousIds, suppress: suppress)
            return Response.json(result, status: .created)
        }

        routes.get("/v1/admin/deletions", access: .admin) { request, _ in
            let items = try await services.deletions.list(source: try services.adminSource(request))
            return Response.json(.object(["items": .array(items)]))
        }

        routes.get("/v1/admin/deletions/:id", access: .admin) { request, context in
            Response.json(
                try await services.deletions.request(
                    source: try services.adminSource(request), id: try context.pathParameter("id")))
        }

        // Lifts the request's suppression; what it deleted stays deleted.
        routes.delete("/v1/admin/deletions/:id", access: .admin) { request, context in
            Response.json(
                try await services.deletions.lift(
                    source: try services.adminSource(request), id: try context.pathParameter("id")))
        }
    }

    /// An optional array of strings.
    private static func strings(_ value: JSONValue?, _ field: String) throws -> [String] {
        guard let value else { return [] }
        guard case .array(let items) = value else {
            throw CollectorError(
                .invalidRequest, "\(field): expected an array of strings, found \(value.typeName)", path: field)
        }
        return try items.enumerated().map { index, item in
            guard case .string(let text) = item else {
                throw CollectorError(
                    .invalidRequest, "\(field)[\(index)]: expected a string, found \(item.typeName)",
                    path: "\(field)[\(index)]")
            }
            return text
        }
    }
}
