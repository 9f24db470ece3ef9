import Foundation
import Hummingbird
import TouchpointCore

/// The query API under `/v1/query` (admin token): sessions, events, survey and promo results.
enum QueryRoutes {
    static func register(on routes: CollectorRouteTable, services: CollectorServices) {
        let query = services.query

        routes.get("/v1/query/sessions", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let parameters = try request.parameters()
            var filter = SessionFilter(range: try timeRange(request), eventName: parameters.get("event"))
            if let id = parameters.get("userId") {
                filter.user = .userId(id)
            } else if let id = parameters.get("anonymousId") {
                filter.user = .anonymousId(id)
            } else if let id = parameters.get("user") {
                filter.user = .any(id)
            }
            let page = try await query.sessions(source: source, filter: filter, page: try pageRequest(request))
            return Response.json(page.json(\.json))
        }

        routes.get("/v1/query/sessions/:sessionId/events", access: .admin) { request, context in
            let source = try services.adminSource(request)
            let page = try await query.sessionEvents(
                source: source, sessionId: try context.pathParameter("sessionId"), page: try pageRequest(request))
            return Response.json(page.json(\.json))
        }

        routes.get("/v1/query/events", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let filter = EventFilter(name: try request.parameters().get("name"), range: try timeRange(request))
            let page = try await query.events(source: source, filter: filter, page: try pageRequest(request))
            return Response.json(page.json(\.json))
        }

        routes.get("/v1/query/surveys", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let results = try await query.surveyResults(source: source, range: try timeRange(request))
            let page = CollectorQuery.page(results, page: try pageRequest(request), key: \.surveyId)
            return Response.json(page.json(\.json))
        }

        routes.get("/v1/query/surveys/:surveyId/answers", access: .admin) { request, context in
            let source = try services.adminSource(request)
            let page = try await query.surveyTextAnswers(
                source: source, surveyId: try context.pathParameter("surveyId"), range: try timeRange(request),
                newestFirst: try request.parameters().get("order") == "newest", page: try pageRequest(request))
            return Response.json(page.json(\.json))
        }

        routes.get("/v1/query/promos", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let results = try await query.promoResults(source: source, range: try timeRange(request))
            let page = CollectorQuery.page(results, page: try pageRequest(request), key: \.appID)
            return Response.json(page.json(\.json))
        }

        routes.get("/v1/query/activity", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            var range = try timeRange(request)
            // Bounded by default: the last 24 hours; at most a week (one row per minute with events).
            let end = range.to ?? services.clock.now()
            if range.from == nil { range.from = end.addingTimeInterval(-86_400) }
            if let from = range.from, end.timeIntervalSince(from) > Self.maximumActivitySpan {
                throw CollectorError(
                    .invalidParameter,
                    "from: the activity range is at most 7 days (one row per minute); ask for several ranges",
                    path: "from")
            }
            let minutes = try await query.eventsPerMinute(source: source, range: range)
            let items: [JSONValue] = minutes.map { entry in
                .object(["minute": .string(Timestamp.format(entry.minute)), "events": .int(entry.count)])
            }
            return Response.json(.object(["items": .array(items)]))
        }

        routes.get("/v1/query/counts", access: .admin) { request, _ in
            let source = try services.adminSource(request)
            let counts = try await query.counts(source: source)
            return Response.json(
                .object([
                    "source": .string(source), "events": .int(counts.events), "sessions": .int(counts.sessions),
                ]))
        }
    }

    /// The longest range `/v1/query/activity` answers, in seconds (7 days).
    static let maximumActivitySpan: TimeInterval = 7 * 86_400

    /// `?limit=` (1…1000, default 100) and `?cursor=`.
    static func pageRequest(_ request: Request) throws -> PageRequest {
        let parameters = try request.parameters()
        var limit = 100
        if let text = parameters.get("limit") {
            guard let value = Int(text), (1...PageRequest.maximumLimit).contains(value) else {
                throw CollectorError(
                    .invalidParameter, "limit: expected 1 to \(PageRequest.maximumLimit), got \"\(text)\"",
                    path: "limit")
            }
            limit = value
        }
        return PageRequest(limit: limit, cursor: parameters.get("cursor"))
    }

    /// `?from=` and `?to=`, ISO-8601 timestamps.
    static func timeRange(_ request: Request) throws -> TimeRange {
        let parameters = try request.parameters()
        var range = TimeRange()
        for name in ["from", "to"] {
            guard let text = parameters.get(name) else { continue }
            guard let date = Timestamp.parse(QueryParameters.timeText(text)) else {
                throw CollectorError(
                    .invalidParameter, "\(name): not an ISO-8601 timestamp: \"\(text)\"", path: name)
            }
            if name == "from" { range.from = date } else { range.to = date }
        }
        return range
    }
}
