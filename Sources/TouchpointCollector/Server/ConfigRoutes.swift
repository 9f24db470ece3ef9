import Foundation
import HTTPTypes
import Hummingbird
import TouchpointCore

/// `GET /v1/config/{kind}` (write key) and `PUT /v1/config/{kind}` (admin token).
enum ConfigRoutes {
    static func register(on router: Router<CollectorRequestContext>, services: CollectorServices) {
        router.get("/v1/config/:kind") { request, context in
            guard let source = try services.writeKeySource(request, allowQuery: true) else {
                throw IngestService.unauthorized
            }
            let kind = ConfigKind(rawValue: try context.parameters.require("kind"))
            guard let document = try await services.configs.document(source: source, kind: kind) else {
                throw CollectorError(.notFound, "no \(kind.rawValue) config has been stored for this source yet")
            }
            var headers: HTTPFields = [:]
            headers[.eTag] = document.etag
            headers[.cacheControl] = "max-age=\(services.configMaxAge)"
            if let condition = request.headers[.ifNoneMatch], ETagMatcher.matches(condition, etag: document.etag) {
                return Response(status: .notModified, headers: headers)
            }
            return Response.json(bytes: Array(document.body.utf8), headers: headers)
        }

        router.put("/v1/config/:kind") { request, context in
            try services.authenticateAdmin(request)
            let source = try services.adminSource(request)
            let kind = ConfigKind(rawValue: try context.parameters.require("kind"))
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
