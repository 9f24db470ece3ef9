import Foundation
import Hummingbird

/// The request context of the collector's router; routes added through ``CollectorRoutes`` use it.
public struct CollectorRequestContext: RequestContext {
    /// Hummingbird's per-request storage (logger, route parameters, endpoint path).
    public var coreContext: CoreRequestContextStorage
    /// The client's IP address as the connection shows it (a proxy's, behind one), for limiting
    /// guesses at secrets; `unknown` when the connection has none.
    public let clientAddress: String

    /// Creates the context for one request.
    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}

/// Extra routes for the collector's router, registered when the server starts.
///
/// A dashboard adds its pages this way and reads data through ``CollectorServices/query``:
///
/// ```swift
/// configuration.routes.append(CollectorRoutes { router, services in
///     router.get("/dashboard") { request, context in
///         try services.authenticateAdmin(request, context: context)
///         return "…"
///     }
/// })
/// ```
public struct CollectorRoutes: Sendable {
    let register: @Sendable (Router<CollectorRequestContext>, CollectorServices) -> Void

    /// Creates a registration.
    /// - Parameter register: adds routes to the router; called once, before the server listens.
    public init(_ register: @escaping @Sendable (Router<CollectorRequestContext>, CollectorServices) -> Void) {
        self.register = register
    }
}

extension CollectorRequestContext {
    /// A route parameter (`:sessionId`), percent-decoded: the router matches the raw path, so a
    /// survey id `Checkout rating` arrives as `Checkout%20rating`. Text that is not valid percent
    /// encoding is taken as it is.
    /// - Throws: Hummingbird's 400 when the route has no such parameter; ``CollectorError``
    ///   `invalid_parameter` when it holds a NUL character (`%00`), which no store keeps in text.
    public func pathParameter(_ name: String) throws -> String {
        let raw = try parameters.require(name)
        let decoded = raw.removingPercentEncoding ?? raw
        guard !decoded.utf8.contains(0) else {
            throw CollectorError(
                .invalidParameter, "\(name): holds a NUL character (%00), which no store keeps in text", path: name)
        }
        return decoded
    }
}
