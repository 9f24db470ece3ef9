import Foundation
import HTTPTypes
import Hummingbird

/// Which browser pages may call the collector's write-key routes, and the CORS headers that say so.
///
/// Write keys are public (they ship in apps and pages), so by default any origin may send events,
/// fetch settings and read the remote config, as analytics.js does from any site. A list of origins
/// narrows it (`--cors-origins`); the admin routes (query API, config writes, dashboard) never
/// answer CORS, so a page elsewhere cannot read them with a visitor's credentials.
public struct CORSPolicy: Sendable, Hashable {
    /// The allowed origins (`https://shop.example.com`, compared without case and trailing
    /// slash); nil allows any.
    public let allowedOrigins: Set<String>?

    /// Creates a policy.
    /// - Parameter allowedOrigins: the allowed origins; nil allows any.
    public init(allowedOrigins: [String]?) {
        self.allowedOrigins = allowedOrigins.map { Set($0.map(Self.normalized)) }
    }

    /// Whether `path` is a route browsers may call: ingest, the settings fetch, the config GETs.
    public static func covers(_ path: String) -> Bool {
        if IngestRoutes.paths.contains(where: { $0.path == path }) { return true }
        if path.hasPrefix("/v1/config/") { return true }
        return SettingsRoutes.writeKey(inPath: path) != nil
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, or nil when that origin
    /// may not call (no header, so the browser refuses the page the answer).
    public func allowOrigin(for origin: String?) -> String? {
        guard let allowedOrigins else { return "*" }
        guard let origin, allowedOrigins.contains(Self.normalized(origin)) else { return nil }
        return origin
    }

    /// Adds the CORS headers of an answer to a request from `origin`.
    func decorate(_ headers: inout HTTPFields, origin: String?) {
        guard let allowed = allowOrigin(for: origin) else { return }
        headers[.accessControlAllowOrigin] = allowed
        if allowedOrigins != nil { headers[.vary] = "Origin" }
        headers[.accessControlExposeHeaders] = "ETag"
    }

    /// The answer to a preflight `OPTIONS` request: the methods and headers the routes take.
    func preflight(origin: String?) -> Response {
        var headers: HTTPFields = [:]
        decorate(&headers, origin: origin)
        if headers[.accessControlAllowOrigin] != nil {
            headers[.accessControlAllowMethods] = "GET, POST, OPTIONS"
            headers[.accessControlAllowHeaders] = "Authorization, Content-Type, Content-Encoding, If-None-Match"
            headers[.accessControlMaxAge] = "86400"
        }
        return Response(status: .noContent, headers: headers)
    }

    /// The origin (`https://host[:port]`, lower case) of a URL.
    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme, let host = url.host else { return nil }
        return normalized("\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? ""))
    }

    static func normalized(_ origin: String) -> String {
        var text = origin.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
