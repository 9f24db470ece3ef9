import HTTPTypes
import Hummingbird
import TouchpointCore

/// `GET /health` (open, for load balancers) and `GET /metrics` (behind `--metrics-token` when set).
enum OperationsRoutes {
    static func register(on routes: CollectorRouteTable, services: CollectorServices) {
        routes.get("/health", access: .open) { _, _ in
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

        routes.get("/metrics", access: .metrics) { _, _ in
            var headers: HTTPFields = [:]
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(string: services.metrics.prometheusText())))
        }
    }
}
