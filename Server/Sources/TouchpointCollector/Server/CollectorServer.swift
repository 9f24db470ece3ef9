import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import ServiceLifecycle
import TouchpointCore
import UnixSignals

/// The Touchpoint collector: ingest, remote config, scenario state and the query API over HTTP.
///
/// `touchpoint serve` runs one until SIGINT or SIGTERM; code (tests, `touchpoint demo`, a
/// dashboard) starts one in the background:
///
/// ```swift
/// var configuration = CollectorConfiguration(dataDirectory: directory.url)
/// configuration.port = 0
/// let collector = try await CollectorServer(configuration: configuration).start()
/// print(collector.baseURL, collector.writeKey)
/// try await collector.shutdown()
/// ```
public struct CollectorServer: Sendable {
    /// What the server was configured with.
    public var configuration: CollectorConfiguration

    /// Creates a server; nothing happens until ``start()`` or ``run(onListening:)``.
    public init(configuration: CollectorConfiguration) {
        self.configuration = configuration
    }

    /// Opens the storage, starts listening, and returns while the server runs in the background.
    /// - Returns: the running collector, which knows its port and stops on ``RunningCollector/shutdown()``.
    /// - Throws: when the data directory, the database or the port cannot be used.
    public func start() async throws -> RunningCollector {
        try await start(signals: [])
    }

    /// Starts the server, runs `body` with it, then shuts it down gracefully whether `body`
    /// returns or throws: a collector for the length of a test or of a tool's task.
    ///
    /// ```swift
    /// let stored = try await CollectorServer(configuration: configuration).withRunning { collector in
    ///     try await collector.services.query.counts(source: "default").events
    /// }
    /// ```
    /// - Parameter body: the work to do while the server runs.
    /// - Returns: what `body` returns.
    /// - Throws: what ``start()`` or `body` throws, or what the shutdown throws after `body` returned.
    public func withRunning<Result: Sendable>(_ body: (RunningCollector) async throws -> Result) async throws -> Result
    {
        let collector = try await start()
        let result: Result
        do {
            result = try await body(collector)
        } catch {
            try? await collector.shutdown()
            throw error
        }
        try await collector.shutdown()
        return result
    }

    /// Runs the server until SIGINT or SIGTERM, then shuts down gracefully: requests in flight
    /// finish, then the database closes.
    /// - Parameter onListening: called once the server listens (to print where, for example).
    public func run(onListening: @Sendable (RunningCollector) -> Void) async throws {
        let running = try await start(signals: [.sigterm, .sigint])
        onListening(running)
        try await running.waitUntilStopped()
    }

    func start(signals: [UnixSignal]) async throws -> RunningCollector {
        let logger = configuration.logger
        // Every event and answer lives here: owner only (a directory that exists keeps its mode,
        // and a warning says when others can look in).
        let dataPath = configuration.dataDirectory.path
        try AtomicFile.createDirectory(dataPath, mode: 0o700)
        if CollectorCredentials.isOpenToOthers(dataPath) {
            logger.warning(
                "the data directory is open to other accounts; chmod 700 it",
                metadata: ["path": "\(dataPath)"])
        }
        let credentialsPath = configuration.dataDirectory.appendingPathComponent(CollectorCredentials.fileName).path
        if CollectorCredentials.isOpenToOthers(credentialsPath) {
            logger.warning(
                "credentials.json can be read by other accounts; chmod 600 it", metadata: ["path": "\(credentialsPath)"]
            )
        }
        let credentials = try CollectorCredentials.resolve(
            directory: configuration.dataDirectory, writeKey: configuration.writeKey,
            adminToken: configuration.adminToken, suppressionKey: configuration.suppressionKey)
        guard SuppressionKey(hex: credentials.suppressionKey) != nil else {
            throw CollectorError(
                .invalidConfiguration,
                "the suppression key (TOUCHPOINT_SUPPRESSION_KEY, or suppressionKey in \(CollectorCredentials.fileName)) must be 64 hex digits"
            )
        }
        try CollectorCredentials.check(credentials.writeKey, "the write key (--write-key, TOUCHPOINT_WRITE_KEY)")
        try CollectorCredentials.check(
            credentials.adminToken, "the admin token (--admin-token, TOUCHPOINT_ADMIN_TOKEN)")
        if let token = configuration.metricsToken {
            try CollectorCredentials.check(token, "the metrics token (--metrics-token, TOUCHPOINT_METRICS_TOKEN)")
        }
        if let secret = configuration.identitySecret {
            try CollectorCredentials.check(
                secret, "the identity secret (--identity-secret, TOUCHPOINT_IDENTITY_SECRET)")
        }
        for (name, days) in [("--retention-days", configuration.retentionDays)]
            + configuration.additionalSources.map({ ("the retention of source \"\($0.id)\"", $0.retentionDays) })
        {
            if let days, days < 1 {
                throw CollectorError(.invalidConfiguration, "\(name): \(days) is not a number of days above zero")
            }
        }
        for (name, zone) in [("--time-zone", configuration.timeZone)]
            + configuration.additionalSources.map({ ("the time zone of source \"\($0.id)\"", $0.timeZone) })
        where SourceCalendar(identifier: zone) == nil {
            throw CollectorError(
                .invalidConfiguration, "\(name): \"\(zone)\" is not an IANA time zone (such as Europe/Berlin or UTC)")
        }
        for (name, properties) in [("--rollup-properties", configuration.rollupProperties)]
            + configuration.additionalSources.map({
                ("the rollup properties of source \"\($0.id)\"", $0.rollupProperties)
            })
        {
            for property in properties where !PropertyName.isValid(property) {
                throw CollectorError(
                    .invalidConfiguration,
                    "\(name): \"\(property)\" is not a property name (a letter or _, then letters, digits or _; at most 64)"
                )
            }
        }
        for source in configuration.additionalSources where !ValueRollup.isPlainName(source.id) {
            throw CollectorError(
                .invalidConfiguration,
                "source \"\(source.id)\": a source's id is not empty and holds no control character")
        }
        for source in configuration.additionalSources {
            try CollectorCredentials.check(source.writeKey, "the write key of source \"\(source.id)\"")
            if let secret = source.identitySecret {
                try CollectorCredentials.check(secret, "the identity secret of source \"\(source.id)\"")
            }
        }
        let storage: SQLCollectorStorage
        let storageDescription: String
        if configuration.eventsURL != nil && configuration.databaseURL == nil {
            throw CollectorError(
                .invalidConfiguration,
                "--events (TOUCHPOINT_EVENTS) needs --database postgres://… (TOUCHPOINT_DATABASE_URL): "
                    + "PostgreSQL keeps the sessions, people and configuration beside ClickHouse's events")
        }
        if let url = configuration.databaseURL {
            var clickHouse: ClickHouseEvents?
            var eventsDescription = ""
            if let text = configuration.eventsURL {
                let eventsURL: ClickHouseURL
                do {
                    eventsURL = try ClickHouseURL(text)
                } catch let error as StorageError {
                    throw CollectorError(.invalidConfiguration, "--events (TOUCHPOINT_EVENTS): \(error.message)")
                }
                clickHouse = ClickHouseEvents(
                    client: ClickHouseClient(
                        url: eventsURL, timeout: .seconds(10), queryTimeLimit: configuration.eventsQueryTimeLimit,
                        logger: logger))
                eventsDescription = ", events in ClickHouse at \(eventsURL)"
            }
            storage = try await SQLCollectorStorage.postgres(
                url: url, maximumConnections: configuration.postgresMaximumConnections, clickHouse: clickHouse,
                logger: logger)
            storageDescription = "PostgreSQL at \(PostgresURL.redacted(url))" + eventsDescription
        } else {
            let path = configuration.dataDirectory.appendingPathComponent(CollectorConfiguration.sqliteFileName).path
            storage = try await SQLCollectorStorage.sqlite(path: path, logger: logger)
            storageDescription = "SQLite at \(path)"
        }
        let services = CollectorServices(
            storage: storage, credentials: credentials, additionalSources: configuration.additionalSources,
            configuration: configuration)
        do {
            try await services.prepare(logger: logger)
        } catch {
            try? await storage.close()
            throw error
        }
        let router = CollectorRouter.make(services: services, extraRoutes: configuration.routes)
        let listening = ListeningSignal()
        let requestedPort = configuration.port
        let server: HTTPServerBuilder
        do {
            server = try Self.serverBuilder(
                limits: configuration.connectionLimits, tls: configuration.tls, metrics: services.metrics)
        } catch {
            try? await storage.close()
            throw error
        }
        let application = Application(
            router: router, server: server,
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: requestedPort)),
            onServerRunning: { channel in listening.succeed(channel.localAddress?.port ?? requestedPort) },
            logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    StorageCloser(storage: storage),
                    RetentionRunner(
                        retention: services.retention, interval: configuration.retentionInterval, logger: logger),
                    SuppressionRefresher(deletions: services.deletions, interval: .seconds(30), logger: logger),
                    CountsBackfillRunner(storage: storage, logger: logger),
                    application,
                ], gracefulShutdownSignals: signals,
                logger: logger))
        let task = Task {
            do {
                try await group.run()
                listening.fail(CollectorError(.storageUnavailable, "the server stopped before it listened"))
            } catch {
                listening.fail(error)
                throw error
            }
        }
        let port: Int
        do {
            port = try await listening.wait()
        } catch {
            // The server never listened (a port in use, say): stop everything and close the database.
            await group.triggerGracefulShutdown()
            _ = await task.result
            try? await storage.close()
            throw error
        }
        return RunningCollector(
            host: configuration.host, port: port, servesTLS: configuration.tls != nil, services: services,
            storageDescription: storageDescription, group: group, task: task)
    }
}

extension CollectorServer {
    /// HTTP/1.1 behind the connection guard (timeouts and the connection limit), inside TLS when
    /// configured.
    static func serverBuilder(
        limits: ConnectionLimits, tls: CollectorTLS?, metrics: CollectorMetrics
    ) throws(CollectorError) -> HTTPServerBuilder {
        try limits.validate()
        let tlsConfiguration = try tls?.serverConfiguration()
        let counter = ConnectionCounter(maximum: limits.maximumConnections)
        return HTTPServerBuilder { responder in
            let http = HTTP1Channel(
                responder: responder, configuration: .init(additionalChannelHandlers: [RequestPhaseHandler()]))
            let guarded = GuardedChannel(base: http, limits: limits, counter: counter, metrics: metrics)
            guard let tlsConfiguration else { return guarded }
            return try TLSChannel(guarded, tlsConfiguration: tlsConfiguration)
        }
    }
}

/// Closes the storage last, after the HTTP server has drained (services stop in reverse order).
private struct StorageCloser: Service {
    let storage: any CollectorStorage

    func run() async throws {
        try? await gracefulShutdown()
        try await storage.close()
    }
}

/// A one-shot: the bound port, or why the server did not start.
private final class ListeningSignal: Sendable {
    private struct State {
        var result: Result<Int, any Error>?
        var waiter: CheckedContinuation<Int, any Error>?
    }

    private let state = Locked(State())

    func succeed(_ port: Int) { settle(.success(port)) }

    func fail(_ error: any Error) { settle(.failure(error)) }

    func wait() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Int, any Error>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    private func settle(_ result: Result<Int, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Int, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }
}
