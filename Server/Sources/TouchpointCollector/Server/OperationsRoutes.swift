import HTTPTypes
import Hummingbird
import TouchpointCore

/// `GET /health`, `/health/live` and `/health/ready` (open, for load balancers and orchestrators) and
/// `GET /metrics` (behind `--metrics-token` when set).
enum OperationsRoutes {
    static func register(on routes: CollectorRouteTable, services: CollectorServices) {
        // The process answers: for a liveness probe, which restarts a process that does not.
        routes.get("/health/live", access: .open) { _, _ in
            Response.json(.object(["status": .string("ok")]))
        }

        // Ready for traffic: the database answers and its schema is this collector's. For a
        // readiness probe, which sends no traffic while it is not.
        routes.get("/health/ready", access: .open) { _, _ in
            var problems: [String] = []
            do {
                let version = try await services.storage.schemaVersion()
                if version != SchemaMigrations.latestVersion {
                    problems.append(
                        "the schema is at version \(version), this collector needs \(SchemaMigrations.latestVersion)")
                }
            } catch {
                problems.append("the database does not answer")
            }
            do {
                try await services.storage.pingEventStore()
            } catch {
                problems.append("ClickHouse, where the events are kept, does not answer")
            }
            var body: [String: JSONValue] = [
                "status": .string(problems.isEmpty ? "ready" : "unavailable"),
                "storage": .string(services.storageBackend), "schema": .int(SchemaMigrations.latestVersion),
            ]
            if !problems.isEmpty { body["error"] = .string(problems.joined(separator: "; ")) }
            return Response.json(.object(body), status: problems.isEmpty ? .ok : .serviceUnavailable)
        }

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
                body: ResponseBody(
                    byteBuffer: ByteBuffer(
                        string: services.metrics.prometheusText() + services.storage.writerMetrics())))
        }
    }
}
