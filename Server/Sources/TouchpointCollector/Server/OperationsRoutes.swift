import HTTPTypes
import Hummingbird
import TouchpointCore

/// `GET /health` (open, for load balancers) and `GET /metrics` (behind `--metrics-token` when set).
enum OperationsRoutes {
    static func register(on router: Router<CollectorRequestContext>, services: CollectorServices) {
        router.get("/health") { _, _ in
            do {
                try await services.storage.ping()
                return Response.json(.object(["status": .string("ok"), "storage": .string(services.storageBackend)]))
            } catch {
                return Response.json(
                    .object([
                        "status": .string("unavailable"), "storage": .string(services.storageBackend),
                        "error": .string("the database does not answer"),
                    ]), status: .serviceUnavailable)
            }
        }

        router.get("/metrics") { request, _ in
            try services.authenticateMetrics(request)
            var headers: HTTPFields = [:]
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(string: services.metrics.prometheusText())))
        }
    }
}
