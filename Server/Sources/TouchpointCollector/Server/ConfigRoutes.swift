import Foundation
import HTTPTypes
import Hummingbird
import TouchpointCore

/// `GET /v1/config/{kind}` (write key) and `PUT /v1/config/{kind}` (admin token).
enum ConfigRoutes {
    static func register(on routes: CollectorRouteTable, services: CollectorServices) {
        routes.get("/v1/config/:kind", access: .writeKey) { request, context in
            let source = try services.requireWriteKeySource(request)
            let kind = ConfigKind(rawValue: try context.pathParameter("kind"))
            guard let document = try await services.configs.document(source: source, kind: kind) else {
                throw CollectorError(.notFound, "no \(kind.rawValue) config has been stored for this source yet")
            }
            return ETagMatcher.response(
                for: request, body: document.body, etag: document.etag, cacheControl: "max-age=\(services.configMaxAge)"
            )
        }

        routes.put("/v1/config/:kind", access: .admin) { request, context in
            let source = try services.adminSource(request)
            let kind = ConfigKind(rawValue: try context.pathParameter("kind"))
            let body = try await RequestBodyReader.read(request, limit: services.limits.maximumRequestBytes)
            let document = try await services.configs.store(
                source: source, kind: kind, body: Array(buffer: body))
            var headers: HTTPFields = [:]
            headers[.eTag] = document.etag
            let summary: JSONValue = .object([
                "source": .string(source), "kind": .string(kind.rawValue), "etag": .string(document.etag),
                "bytes": .int(document.body.utf8.count),
            ])
            return Response.json(summary, headers: headers)
        }
    }
}

/// `If-None-Match` / `If-Match` lists: `"a", W/"b"` or `*`.
enum ETagMatcher {
    /// A JSON `body` with its `ETag`, or 304 Not Modified when the request's `If-None-Match` names it.
    static func response(for request: Request, body: String, etag: String, cacheControl: String) -> Response {
        var headers: HTTPFields = [:]
        headers[.eTag] = etag
        headers[.cacheControl] = cacheControl
        if let condition = request.headers[.ifNoneMatch], matches(condition, etag: etag) {
            return Response(status: .notModified, headers: headers)
        }
        return Response.json(bytes: Array(body.utf8), headers: headers)
    }

    /// Whether the header value names `etag` (weak comparison) or is `*`.
    static func matches(_ header: String, etag: String) -> Bool {
        for candidate in header.split(separator: ",") {
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == etag { return true }
        }
        return false
    }
}
