import HTTPTypes
import Hummingbird
import Logging
import TouchpointCore

/// Turns every error into a JSON response and counts every request for `/metrics`.
struct CollectorMiddleware: RouterMiddleware {
    typealias Context = CollectorRequestContext

    let metrics: CollectorMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = Self.response(for: error, logger: context.logger)
        }
        // The server closes such a connection after answering; saying so lets the client know
        // before it tries to reuse it (RFC 9112 §9.6). Linux's URLSession otherwise may send the
        // next request on the closing connection and resend it without its body.
        if let connection = request.headers[.connection], connection.lowercased().contains("close") {
            response.headers[.connection] = "close"
        }
        metrics.recordRequest(
            route: context.endpointPath ?? "unmatched", status: response.status.code,
            seconds: (ContinuousClock.now - start).seconds)
        return response
    }

    static func response(for error: any Error, logger: Logger) -> Response {
        switch error {
        case let error as CollectorError:
            return error.response
        case let error as StorageError where error.code == .invalidCursor:
            return Response.json(
                CollectorError(.invalidParameter, "cursor: \(error.message)", path: "cursor").json,
                status: .badRequest)
        case let error as StorageError where error.code == .queryTooSlow:
            // The same query would be stopped again: no `503`, no `Retry-After`.
            logger.warning("query stopped at its time limit", metadata: ["error": "\(error)"])
            return CollectorError(
                .queryTooSlow,
                "the query ran past its time limit and was stopped; ask for a shorter range (from, to) or fewer steps"
            ).response
        case let error as Hummingbird.HTTPError:
            let message = error.body ?? error.status.reasonPhrase
            let code = error.status == .notFound ? "not_found" : "http_\(error.status.code)"
            return Response.json(.object(["error": .string(message), "code": .string(code)]), status: error.status)
        default:
            // The database failed (or something unexpected did): nothing was acknowledged, so the
            // client may retry (a write committed but never flushed to disk is among them: a
            // resend is stored once). The details go to the log, not to the client.
            logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            let failure = CollectorError(
                .storageUnavailable,
                "storage unavailable; nothing was acknowledged, retry later (a resend is stored once)",
                retryAfter: 1)
            return failure.response
        }
    }
}
