import Foundation
import HTTPTypes
import Hummingbird
import TouchpointCore

/// Scenario documents with version ETags:
///
/// - `GET /v1/scenario/{namespace}/{scenarioID}`: a namespace's own document, read with the
///   write key (or the admin token); `PUT` only with the admin token, since the write key is
///   public.
/// - `GET`/`PUT /v1/users/{userId}/scenario/{namespace}/{scenarioID}`: one user's document,
///   with the write key and `X-Touchpoint-User-Signature` (see ``IdentityVerification``), or
///   with the admin token.
///
/// `If-Match: *` (overwrite whatever is stored) needs the admin token.
enum ScenarioRoutes {
    /// Who a request speaks as, and for which source.
    enum Caller {
        case admin(source: String)
        case writeKey(source: String)

        var source: String {
            switch self {
            case .admin(let source), .writeKey(let source): return source
            }
        }

        var isAdmin: Bool {
            if case .admin = self { return true }
            return false
        }
    }

    static func register(on routes: CollectorRouteTable, services: CollectorServices) {
        routes.get("/v1/scenario/:namespace/:scenarioID", access: .writeKeyOrAdmin) { request, context in
            let caller = try Self.caller(request, context, services)
            return try await read(request, context, services, source: caller.source, owner: .namespace)
        }

        routes.put("/v1/scenario/:namespace/:scenarioID", access: .writeKeyOrAdmin) { request, context in
            let caller = try Self.caller(request, context, services)
            guard caller.isAdmin else {
                throw CollectorError(
                    .forbidden,
                    "a namespace's own documents are written with the admin token (Authorization: Bearer); "
                        + "with the write key, write a user's documents under /v1/users/{userId}/scenario/…")
            }
            return try await write(request, context, services, caller: caller, owner: .namespace)
        }

        routes.get("/v1/users/:userId/scenario/:namespace/:scenarioID", access: .writeKeyOrAdmin) { request, context in
            let (caller, owner) = try Self.userCaller(request, context, services)
            return try await read(request, context, services, source: caller.source, owner: owner)
        }

        routes.put("/v1/users/:userId/scenario/:namespace/:scenarioID", access: .writeKeyOrAdmin) { request, context in
            let (caller, owner) = try Self.userCaller(request, context, services)
            return try await write(request, context, services, caller: caller, owner: owner)
        }
    }

    /// The admin token (`Authorization: Bearer`, `?source=` picks the source) or the write key.
    static func caller(
        _ request: Request, _ context: CollectorRequestContext, _ services: CollectorServices
    ) throws -> Caller {
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") {
            try services.authenticateAdmin(request, context: context)
            return .admin(source: try services.adminSource(request))
        }
        return .writeKey(source: try services.requireWriteKeySource(request))
    }

    /// The caller of a user's document: the admin token, or the write key with that user's signature.
    static func userCaller(
        _ request: Request, _ context: CollectorRequestContext, _ services: CollectorServices
    ) throws -> (Caller, ScenarioOwner) {
        let caller = try caller(request, context, services)
        let userId = try context.pathParameter("userId")
        guard case .writeKey(let source) = caller else { return (caller, .user(userId)) }
        guard services.hasIdentitySecret(source) else {
            throw CollectorError(
                .forbidden,
                "this source has no identity secret, so it keeps no per-user documents (start the collector with "
                    + "--identity-secret)")
        }
        guard let name = HTTPField.Name(IdentityVerification.headerName),
            let signature = request.headers[name], services.verifies(signature, userId: userId, source: source)
        else {
            throw CollectorError(
                .forbidden,
                "\(IdentityVerification.headerName): missing or not the signature of user \"\(userId)\" "
                    + "(HMAC-SHA256 of the user id with the source's identity secret, made by the app's backend)")
        }
        return (caller, .user(userId))
    }

    static func read(
        _ request: Request, _ context: CollectorRequestContext, _ services: CollectorServices, source: String,
        owner: ScenarioOwner
    ) async throws -> Response {
        let namespace = try context.pathParameter("namespace")
        let scenarioId = try context.pathParameter("scenarioID")
        guard
            let state = try await services.scenarios.state(
                source: source, owner: owner, namespace: namespace, scenarioId: scenarioId)
        else {
            throw CollectorError(.notFound, "\(namespace)/\(scenarioId): nothing is stored")
        }
        return ETagMatcher.response(for: request, body: state.body, etag: state.etag, cacheControl: "no-cache")
    }

    static func write(
        _ request: Request, _ context: CollectorRequestContext, _ services: CollectorServices, caller: Caller,
        owner: ScenarioOwner
    ) async throws -> Response {
        let namespace = try context.pathParameter("namespace")
        let scenarioId = try context.pathParameter("scenarioID")
        let precondition = try Self.precondition(request.headers)
        if precondition == .present, !caller.isAdmin {
            throw CollectorError(
                .forbidden,
                "If-Match: * overwrites whatever is stored and needs the admin token; send the ETag you read")
        }
        let body = try await RequestBodyReader.read(request, limit: services.limits.maximumRequestBytes)
        let version = try await services.scenarios.write(
            source: caller.source, owner: owner, namespace: namespace, scenarioId: scenarioId,
            body: Array(buffer: body), precondition: precondition)
        let state = ScenarioState(body: "", version: version)
        var headers: HTTPFields = [:]
        headers[.eTag] = state.etag
        return Response.json(.object(["etag": .string(state.etag), "version": .int(Int(version))]), headers: headers)
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
