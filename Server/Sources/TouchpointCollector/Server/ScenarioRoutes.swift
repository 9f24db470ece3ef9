import Foundation
import HTTPTypes
import Hummingbird
import TouchpointCore

/// `GET`/`PUT /v1/scenario/{namespace}/{scenarioID}` with version ETags (write key).
enum ScenarioRoutes {
    static func register(on router: Router<CollectorRequestContext>, services: CollectorServices) {
        router.get("/v1/scenario/:namespace/:scenarioID") { request, context in
            let source = try services.requireWriteKeySource(request)
            let namespace = try context.pathParameter("namespace")
            let scenarioId = try context.pathParameter("scenarioID")
            guard
                let state = try await services.scenarios.state(
                    source: source, namespace: namespace, scenarioId: scenarioId)
            else {
                throw CollectorError(.notFound, "\(namespace)/\(scenarioId): nothing is stored")
            }
            return ETagMatcher.response(for: request, body: state.body, etag: state.etag, cacheControl: "no-cache")
        }

        router.put("/v1/scenario/:namespace/:scenarioID") { request, context in
            let source = try services.requireWriteKeySource(request)
            let namespace = try context.pathParameter("namespace")
            let scenarioId = try context.pathParameter("scenarioID")
            let precondition = try Self.precondition(request.headers)
            let body = try await RequestBodyReader.read(request, limit: services.limits.maximumRequestBytes)
            let version = try await services.scenarios.write(
                source: source, namespace: namespace, scenarioId: scenarioId, body: Array(buffer: body),
                precondition: precondition)
            let state = ScenarioState(body: "", version: version)
            var headers: HTTPFields = [:]
            headers[.eTag] = state.etag
            return Response.json(
                .object(["etag": .string(state.etag), "version": .int(Int(version))]), headers: headers)
        }
    }

    /// The write's condition from `If-Match` / `If-None-Match`.
    /// - Throws: ``CollectorError``: `precondition_required` without either header,
    ///   `precondition_failed` for an `If-Match` that names no version, `invalid_request` for an
    ///   `If-None-Match` other than `*`.
    static func precondition(_ headers: HTTPFields) throws -> ScenarioPrecondition {
        if let match = headers[.ifMatch]?.trimmingCharacters(in: .whitespaces) {
            if match == "*" { return .present }
            var tag = Substring(match)
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            guard tag.count >= 3, tag.first == "\"", tag.last == "\"", let version = Int64(tag.dropFirst().dropLast())
            else {
                throw CollectorError(
                    .preconditionFailed, "If-Match: \(match) is not a version this collector handed out")
            }
            return .version(version)
        }
        if let noneMatch = headers[.ifNoneMatch]?.trimmingCharacters(in: .whitespaces) {
            guard noneMatch == "*" else {
                throw CollectorError(.invalidRequest, "If-None-Match: a write accepts only * (create when absent)")
            }
            return .absent
        }
        throw CollectorError(
            .preconditionRequired,
            "send If-Match: \"<etag>\" to update, or If-None-Match: * to create; unconditional writes would lose updates"
        )
    }
}
