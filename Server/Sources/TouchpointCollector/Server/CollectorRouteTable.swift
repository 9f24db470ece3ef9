import HTTPTypes
import Hummingbird

/// Who may call a route. Every route of the collector is added through a
/// ``CollectorRouteTable`` with one of these: the table puts the check `admin` and `metrics` need
/// in front of the handler (so no handler checks them by hand), and a test walks the table to see
/// every route that is not `open` refuse a request without credentials.
enum RouteAccess: String, Sendable, CaseIterable {
    /// Anyone: `/health`, the sign-in page, the dashboard's two static assets, `/`.
    case open
    /// The write key (HTTP Basic, `?writeKey=`, the body or the path): the handler needs the
    /// source the key names, so it resolves the key itself.
    case writeKey
    /// The write key with a user's signature, or the admin token: the handler decides which
    /// documents the caller may touch.
    case writeKeyOrAdmin
    /// The admin token, checked (and guesses rate-limited) before the handler runs.
    case admin
    /// The metrics token when the collector has one, checked before the handler runs.
    case metrics
    /// A dashboard session cookie: the handler sends a page to the sign-in page without one.
    case dashboardSession
}

/// One route as the table holds it.
struct CollectorRoute: Sendable, Hashable, CustomStringConvertible {
    var method: HTTPRequest.Method
    var path: String
    var access: RouteAccess

    var description: String { "\(method) \(path) (\(access))" }
}

/// The only way the collector adds its routes: each with its ``RouteAccess``, into the router
/// group that checks it.
final class CollectorRouteTable {
    typealias Context = CollectorRequestContext

    private let groups: [RouteAccess: RouterGroup<Context>]
    /// Every route added, in order.
    private(set) var routes: [CollectorRoute] = []

    init(router: Router<Context>, services: CollectorServices) {
        var groups: [RouteAccess: RouterGroup<Context>] = [:]
        for access in RouteAccess.allCases {
            groups[access] = router.group().add(middleware: AccessMiddleware(access: access, services: services))
        }
        self.groups = groups
    }

    /// Adds `handler` for `method` on `path`, behind `access`'s check.
    func on(
        _ method: HTTPRequest.Method, _ path: String, access: RouteAccess,
        _ handler: @Sendable @escaping (Request, Context) async throws -> some ResponseGenerator
    ) {
        routes.append(CollectorRoute(method: method, path: path, access: access))
        groups[access]?.on(RouterPath(path), method: method, use: handler)
    }

    func get(
        _ path: String, access: RouteAccess,
        _ handler: @Sendable @escaping (Request, Context) async throws -> some ResponseGenerator
    ) { on(.get, path, access: access, handler) }

    func put(
        _ path: String, access: RouteAccess,
        _ handler: @Sendable @escaping (Request, Context) async throws -> some ResponseGenerator
    ) { on(.put, path, access: access, handler) }

    func post(
        _ path: String, access: RouteAccess,
        _ handler: @Sendable @escaping (Request, Context) async throws -> some ResponseGenerator
    ) { on(.post, path, access: access, handler) }

    func delete(
        _ path: String, access: RouteAccess,
        _ handler: @Sendable @escaping (Request, Context) async throws -> some ResponseGenerator
    ) { on(.delete, path, access: access, handler) }
}

/// The check in front of a route group's handlers.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = CollectorRequestContext

    let access: RouteAccess
    let services: CollectorServices

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        switch access {
        case .admin: try services.authenticateAdmin(request, context: context)
        case .metrics: try services.authenticateMetrics(request)
        case .open, .writeKey, .writeKeyOrAdmin, .dashboardSession: break
        }
        return try await next(request, context)
    }
}
