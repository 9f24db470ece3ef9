import Hummingbird
import TouchpointCore

/// `POST /v1/batch`, `/v1/track`, `/v1/identify`, `/v1/page`, `/v1/screen`, `/v1/group`, `/v1/alias`.
enum IngestRoutes {
    static func register(on router: Router<CollectorRequestContext>, services: CollectorServices) {
        router.post("/v1/batch") { request, _ in
            try await ingest(request, endpoint: .batch, services: services)
        }
        for type in MessageType.allCases {
            router.post("/v1/\(type.rawValue)") { request, _ in
                try await ingest(request, endpoint: .single(type), services: services)
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
