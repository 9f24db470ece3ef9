import Hummingbird
import TouchpointCore

/// `POST /v1/batch`, `/v1/track`, `/v1/identify`, `/v1/page`, `/v1/screen`, `/v1/group`, `/v1/alias`,
/// and the short forms Segment's SDKs use: `/v1/b` (analytics-swift, analytics-kotlin and
/// analytics.js batches), `/v1/t`, `/v1/i`, `/v1/p`, `/v1/s`, `/v1/g`, `/v1/a` (analytics.js single
/// calls).
///
/// The body is read as JSON whatever `Content-Type` says: browsers send `text/plain` to avoid a
/// CORS preflight. The write key may be in the `Authorization` header or in the body.
enum IngestRoutes {
    /// Every ingest path with the endpoint it stands for.
    static let paths: [(path: String, endpoint: IngestEndpoint)] =
        [("/v1/batch", .batch), ("/v1/b", .batch)]
        + MessageType.allCases.flatMap { type in
            [("/v1/\(type.rawValue)", IngestEndpoint.single(type)), ("/v1/\(type.shortPath)", .single(type))]
        }

    static func register(on routes: CollectorRouteTable, services: CollectorServices) {
        for (path, endpoint) in paths {
            routes.post(path, access: .writeKey) { request, _ in
                try await ingest(request, endpoint: endpoint, services: services)
            }
        }
    }

    private static func ingest(_ request: Request, endpoint: IngestEndpoint, services: CollectorServices)
        async throws -> Response
    {
        // A key in the header is checked before the body is read; one in the body after.
        let source = try services.writeKeySource(request, allowQuery: false)
        let body = try await RequestBodyReader.read(request, limit: services.limits.maximumRequestBytes)
        let outcome = try await services.ingest.ingest(body, endpoint: endpoint, source: source)
        return Response.json(outcome.json)
    }
}
