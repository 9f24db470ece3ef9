import Foundation
import HTTPTypes
import Hummingbird
import TouchpointCore

/// `GET /v1/projects/{writeKey}/settings` (and `/projects/{writeKey}/settings`): the settings
/// document Segment's SDKs fetch at start-up from their CDN host.
///
/// Pointed at the collector (analytics-swift's and analytics-kotlin's `cdnHost`, analytics.js's
/// `cdnURL`), an SDK reads its `Segment.io` integration from here; its `apiHost` names this
/// collector, so the SDK keeps sending events here rather than to the address a stale default
/// names. The write key is the path's; an unknown key is `404`. Nothing else is enabled: no device-mode
/// destinations, no edge functions, no remote plugins, no metrics upload.
enum SettingsRoutes {
    static func register(on routes: CollectorRouteTable, services: CollectorServices) {
        for path in ["/v1/projects/:writeKey/settings", "/projects/:writeKey/settings"] {
            routes.get(path, access: .writeKey) { request, context in
                let writeKey = try context.pathParameter("writeKey")
                guard services.sourceRegistry.source(forWriteKey: writeKey) != nil else {
                    throw CollectorError(.notFound, "writeKey: no source has this write key", path: "writeKey")
                }
                let document = settings(
                    writeKey: writeKey, apiHost: apiHost(for: request, services: services),
                    scheme: services.scheme(of: request))
                var headers: HTTPFields = [:]
                headers[.cacheControl] = "max-age=\(services.configMaxAge)"
                return Response.json(document, headers: headers)
            }
        }
    }

    /// The write key in a settings path, or nil when `path` is not one.
    static func writeKey(inPath path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let components = parts.first == "v1" ? Array(parts.dropFirst()) : Array(parts)
        guard components.count == 3, components[0] == "projects", components[2] == "settings", !components[1].isEmpty
        else { return nil }
        return String(components[1])
    }

    /// `host[:port][/prefix]/v1`, without a scheme, as the SDKs read `apiHost`: the configured
    /// public URL's, else the request's `Host`.
    static func apiHost(for request: Request, services: CollectorServices) -> String {
        if let url = services.publicURL, let host = url.host {
            var text = host
            if let port = url.port { text += ":\(port)" }
            var path = url.path
            while path.hasSuffix("/") { path.removeLast() }
            return text + path + "/v1"
        }
        let host = request.head.authority ?? HTTPField.Name("Host").flatMap { request.headers[$0] }
        return (host ?? "127.0.0.1") + "/v1"
    }

    /// The settings document for `writeKey`, sending to `apiHost` over `scheme`.
    static func settings(writeKey: String, apiHost: String, scheme: String) -> JSONValue {
        .object([
            "integrations": .object([
                "Segment.io": .object([
                    "apiKey": .string(writeKey),
                    "apiHost": .string(apiHost),
                    "protocol": .string(scheme),
                    "unbundledIntegrations": .array([]),
                    "addBundledMetadata": .bool(true),
                    "maybeBundledConfigIds": .object([:]),
                    "versionSettings": .object(["version": .string("4.4.7"), "componentTypes": .array([])]),
                ])
            ]),
            "plan": .object([
                "track": .object(["__default": .object(["enabled": .bool(true), "integrations": .object([:])])]),
                "identify": .object(["__default": .object(["enabled": .bool(true)])]),
                "group": .object(["__default": .object(["enabled": .bool(true)])]),
            ]),
            "edgeFunction": .object([:]),
            "analyticsNextEnabled": .bool(true),
            "middlewareSettings": .object([:]),
            "enabledMiddleware": .object([:]),
            "metrics": .object(["sampleRate": .int(0)]),
            "legacyVideoPluginsEnabled": .bool(false),
            "remotePlugins": .array([]),
        ])
    }
}
