import Foundation
import ServiceLifecycle

/// A collector that is listening: where, with which credentials, and how to stop it.
public final class RunningCollector: Sendable {
    /// The address it listens on.
    public let host: String
    /// The port it listens on (the one picked when configured with port 0).
    public let port: Int
    /// Whether it speaks HTTPS (configured with ``CollectorConfiguration/tls``).
    public let servesTLS: Bool
    /// The collector's parts: ingest, configs, scenarios, query, metrics.
    public let services: CollectorServices
    /// Where events are stored, for people: `SQLite at …/touchpoint.sqlite` or `PostgreSQL at …`.
    public let storageDescription: String

    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    init(
        host: String, port: Int, servesTLS: Bool, services: CollectorServices, storageDescription: String,
        group: ServiceGroup, task: Task<Void, any Error>
    ) {
        self.host = host
        self.port = port
        self.servesTLS = servesTLS
        self.services = services
        self.storageDescription = storageDescription
        self.group = group
        self.task = task
    }

    /// `http://host:port`, or `https://host:port` when it serves TLS.
    public var baseURL: URL {
        let scheme = servesTLS ? "https" : "http"
        // An IPv6 literal goes in brackets, its zone separator written as %25 (RFC 6874).
        let shownHost = host.contains(":") ? "[\(host.replacingOccurrences(of: "%", with: "%25"))]" : host
        return URL(string: "\(scheme)://\(shownHost):\(port)") ?? URL(string: "\(scheme)://127.0.0.1:\(port)")!
    }

    /// The default source's write key.
    public var writeKey: String { services.credentials.writeKey }

    /// The admin token for the query API and config writes.
    public var adminToken: String { services.credentials.adminToken }

    /// Stops gracefully: no new connections, requests in flight finish, then the database closes.
    public func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }

    /// Waits until the collector has stopped (after a signal or ``shutdown()``).
    public func waitUntilStopped() async throws {
        try await task.value
    }
}
