import HTTPTypes
import Hummingbird

/// Applies a ``CORSPolicy``: answers preflights and adds CORS headers on the routes
/// ``CORSPolicy/covers(_:)`` names, and leaves every other route alone. (Named apart from
/// Hummingbird's `CORSMiddleware`, which applies one policy to every route.)
struct CORSPolicyMiddleware: RouterMiddleware {
    typealias Context = CollectorRequestContext

    let policy: CORSPolicy

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard CORSPolicy.covers(request.uri.path) else { return try await next(request, context) }
        let origin = request.headers[.origin]
        if request.method == .options {
            return policy.preflight(origin: origin)
        }
        var response = try await next(request, context)
        policy.decorate(&response.headers, origin: origin)
        return response
    }
}
