import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TouchpointCore

/// People, definitions, trends, funnels, retention, paths and the export under `/v1/query` (admin token).
enum AnalyticsRoutes {
    static func register(on routes: CollectorRouteTable, services: CollectorServices) {
        let query = services.query

        routes.get("/v1/query/users", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let search = try request.parameters().get("search")
            if let search, search.utf8.count > 200 {
                throw CollectorError(.invalidParameter, "search: longer than 200 bytes", path: "search")
            }
            let page = try await query.people(
                source: source, search: search, page: try QueryRoutes.pageRequest(request))
            return Response.json(page.json(\.json))
        }

        routes.get("/v1/query/users/:userId", access: .admin) { request, context in
            let source = try services.adminSource(request)
            let userId = try context.pathParameter("userId")
            guard let found = try await query.person(source: source, userId: userId) else {
                throw CollectorError(.notFound, "no events of user \"\(userId)\" in source \"\(source)\"")
            }
            var members = found.person.jsonMembers
            members["sessions"] = .array(found.sessions.map(\.json))
            members["recentEvents"] = .array(found.events.map(\.json))
            return Response.json(.object(members))
        }

        routes.get("/v1/query/definitions", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let asked = try parameters(request, services, source).definitions()
            return Response.json(
                try await query.definitions(source: source, event: asked.event, limit: asked.limit).json)
        }

        routes.get("/v1/query/trends", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let insight = try parameters(request, services, source).trends()
            return Response.json(try await query.trends(source: source, insight).json)
        }

        routes.get("/v1/query/funnel", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let funnel = try parameters(request, services, source).funnel()
            return Response.json(try await query.funnel(source: source, funnel).json)
        }

        routes.get("/v1/query/retention", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let retention = try parameters(request, services, source).retention()
            return Response.json(
                try await query.retention(source: source, retention, now: services.clock.now()).json)
        }

        routes.get("/v1/query/paths", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let paths = try parameters(request, services, source).paths()
            return Response.json(try await query.paths(source: source, paths).json)
        }

        routes.get("/v1/query/stickiness", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let stickiness = try parameters(request, services, source).stickiness()
            return Response.json(try await query.stickiness(source: source, stickiness).json)
        }

        routes.get("/v1/query/lifecycle", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let lifecycle = try parameters(request, services, source).lifecycle()
            return Response.json(try await query.lifecycle(source: source, lifecycle).json)
        }

        routes.get("/v1/query/export", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let range = try parameters(request, services, source).exportRange()
            // The first page is read before the answer starts, so a database that is down is a
            // 503, not a 200 that stops.
            let first = try await query.exportPage(source: source, range: range, page: PageRequest(limit: 1000))
            var headers = HTTPFields()
            headers[.contentType] = "application/x-ndjson; charset=utf-8"
            let body = ResponseBody { writer in
                var page = first
                while true {
                    if !page.items.isEmpty { try await writer.write(ByteBuffer(string: page.items.joined())) }
                    guard let cursor = page.nextCursor else { break }
                    page = try await query.exportPage(
                        source: source, range: range, page: PageRequest(limit: 1000, cursor: cursor))
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: headers, body: body)
        }
    }

    static func parameters(_ request: Request, _ services: CollectorServices, _ source: String) throws
        -> AnalyticsParameters
    {
        let parameters = try request.parameters()
        return AnalyticsParameters(
            now: services.clock.now(), calendar: services.calendar(of: source), names: parameters.names
        ) { name in
            parameters.get(name)
        }
    }
}
