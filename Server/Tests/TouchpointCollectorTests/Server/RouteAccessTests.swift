import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// Walks every route the collector adds (through ``CollectorRouteTable``, the only way it adds
/// them) and sends each a request without credentials: only the routes listed here as open may
/// answer it. A new route declared `open` fails this test until it is added to the list; one
/// declared `admin` or `metrics` is checked by the table's middleware whatever its handler does.
struct RouteAccessTests {
    /// The routes anyone may call, deliberately.
    static let open: Set<String> = [
        "GET /", "GET /health", "GET /health/live", "GET /health/ready", "GET /dashboard/sign-in",
        "POST /dashboard/sign-in",
        "GET /dashboard/assets/dashboard.css", "GET /dashboard/assets/dashboard.js",
    ]

    /// The route's path with every parameter filled in.
    static func concrete(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(":") ? "x" : String($0) }.joined(separator: "/")
    }

    @Test func everyRouteButTheOpenOnesRefusesARequestWithoutCredentials() async throws {
        try await RouterHarness.runWithRoutes(configure: { $0.metricsToken = "metrics-token-0123456789" }) {
            client, _, routes async throws in
            #expect(routes.count > 30, "the table holds \(routes.count) routes")
            #expect(Set(routes.map { "\($0.method) \($0.path)" }).count == routes.count, "a route added twice")
            for route in routes {
                let name = "\(route.method) \(route.path)"
                #expect((route.access == .open) == Self.open.contains(name), "\(route)")
                let response = try await client.execute(
                    uri: Self.concrete(route.path), method: route.method, body: ByteBuffer(string: "{}"))
                switch route.access {
                case .open:
                    // (Signing in with a wrong token is a 401 of its own, not a missing credential.)
                    if route.method == .get { #expect(response.status.code < 400, "\(route): \(response.status)") }
                case .admin, .metrics, .writeKeyOrAdmin:
                    #expect(response.status == .unauthorized, "\(route): \(response.status)")
                case .writeKey:
                    // The settings document's key is its path: an unknown one is not found.
                    let expected: HTTPResponse.Status =
                        route.path.hasSuffix("/settings") ? .notFound : .unauthorized
                    #expect(response.status == expected, "\(route): \(response.status)")
                case .dashboardSession:
                    // Pages send the browser to the sign-in page; the rest refuse.
                    if route.method == .get, route.path != "/dashboard/live/events" {
                        #expect(response.status == .seeOther, "\(route): \(response.status)")
                        #expect(response.headers[.location]?.hasPrefix("/dashboard/sign-in") == true)
                    } else {
                        #expect(response.status == .unauthorized, "\(route): \(response.status)")
                    }
                }
            }
        }
    }

    @Test func theAdminTokenOpensTheAdminRoutesThroughTheMiddleware() async throws {
        try await RouterHarness.runWithRoutes { client, _, routes async throws in
            for route in routes where route.access == .admin && route.method == .get {
                let response = try await client.execute(
                    uri: Self.concrete(route.path), method: route.method, headers: .bearer(RouterHarness.adminToken))
                #expect(response.status != .unauthorized, "\(route): \(response.status)")
            }
        }
    }
}
