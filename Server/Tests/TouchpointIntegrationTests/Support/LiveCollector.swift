import Foundation
import Logging
import TouchpointCollector
import TouchpointCore
import TouchpointStore
import TouchpointTesting

/// A real collector on 127.0.0.1 with SQLite in a temporary directory, which can stop and start
/// again on the same port and data directory.
final class LiveCollector: Sendable {
    let directory: TemporaryDirectory
    private let running: Locked<RunningCollector?>
    /// The port it listens on, the same across restarts.
    let port: Int
    let writeKey: String
    let adminToken: String

    private init(directory: TemporaryDirectory, running: RunningCollector) {
        self.directory = directory
        self.running = Locked(running)
        port = running.port
        writeKey = running.writeKey
        adminToken = running.adminToken
    }

    /// `http://127.0.0.1:<port>`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The default source's identity secret, which signs user ids as an app's backend would.
    static let identitySecret = "integration-identity-secret"

    static func configuration(directory: TemporaryDirectory, port: Int) -> CollectorConfiguration {
        var configuration = CollectorConfiguration(port: port, dataDirectory: directory.url)
        configuration.identitySecret = identitySecret
        configuration.logger.logLevel = .warning
        return configuration
    }

    /// `id` with the signature the app's backend would make for it.
    static func user(_ id: String) -> HTTPStoreBackend.User {
        HTTPStoreBackend.User(id: id, signature: IdentityVerification.signature(userId: id, secret: identitySecret))
    }

    /// Starts a collector on a free port over a fresh data directory.
    static func start() async throws -> LiveCollector {
        let directory = try TemporaryDirectory(prefix: "integration-collector")
        let running = try await CollectorServer(configuration: configuration(directory: directory, port: 0)).start()
        return LiveCollector(directory: directory, running: running)
    }

    /// Stops gracefully (requests in flight finish); a stopped collector refuses connections.
    func stop() async throws {
        guard
            let running = running.withLock({ state in
                defer { state = nil }; return state
            })
        else { return }
        try await running.shutdown()
    }

    /// Starts again on the same port and data directory (the same credentials and stored data).
    func restart() async throws {
        try await stop()
        let configuration = Self.configuration(directory: directory, port: port)
        let restarted = try await CollectorServer(configuration: configuration).start()
        running.withLock { $0 = restarted }
    }

    /// `GET path` with the admin token, parsed as JSON.
    func query(_ path: String) async throws -> JSONValue {
        guard let url = URL(string: baseURL.absoluteString + path) else { throw TestFailure("not a URL: \(path)") }
        var request = TransportRequest(method: .get, url: url)
        request.headers["Authorization"] = "Bearer \(adminToken)"
        let response = try await URLSessionTransport().send(request)
        guard response.status == 200 else {
            throw TestFailure("GET \(path): HTTP \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
        return try JSONParser.parse(response.body)
    }

    /// The value of a Prometheus counter or gauge without labels from `GET /metrics`.
    func metric(_ name: String) async throws -> Int {
        let response = try await URLSessionTransport().send(
            TransportRequest(url: baseURL.appendingPathComponent("metrics")))
        let text = String(decoding: response.body, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            if let value = Double(line.dropFirst(name.count + 1)) { return Int(value) }
        }
        throw TestFailure("GET /metrics: HTTP \(response.status), no \(name) in \(text)")
    }

    /// `PUT /v1/config/<kind>` with the admin token: the default source's survey config or catalog.
    func putConfig(_ kind: String, _ json: String) async throws {
        guard let url = URL(string: baseURL.absoluteString + "/v1/config/" + kind) else {
            throw TestFailure("not a config kind: \(kind)")
        }
        var request = TransportRequest(method: .put, url: url, body: Array(json.utf8))
        request.headers["Authorization"] = "Bearer \(adminToken)"
        request.headers["Content-Type"] = "application/json"
        let response = try await URLSessionTransport().send(request)
        guard response.status == 200 else {
            throw TestFailure("PUT \(kind): HTTP \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
    }

    /// Every item of a paged query list, following `nextCursor`.
    func queryAll(_ path: String) async throws -> [JSONValue] {
        var items: [JSONValue] = []
        var cursor: String?
        repeat {
            let separator = path.contains("?") ? "&" : "?"
            let page = try await query(
                path + separator + "limit=1000" + (cursor.map { "&cursor=" + Self.queryEncoded($0) } ?? ""))
            items += page["items"]?.arrayValue ?? []
            cursor = page["nextCursor"]?.stringValue
        } while cursor != nil
        return items
    }
}

extension LiveCollector {
    static func queryEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}
