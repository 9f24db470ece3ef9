import ArgumentParser
import Foundation
import Logging
import TouchpointCollector

/// `touchpoint serve`: runs the collector until Ctrl-C (SIGINT) or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Touchpoint collector (Segment-compatible ingest, remote config, query API).",
        discussion: """
            Stores events in SQLite under the data directory unless --database names a PostgreSQL URL.
            The write key and admin token are created on first start and kept in the data directory.
            Every option can also come from the environment: TOUCHPOINT_HOST, TOUCHPOINT_PORT, \
            TOUCHPOINT_DATA, TOUCHPOINT_DATABASE_URL, TOUCHPOINT_EVENTS, TOUCHPOINT_WRITE_KEY, TOUCHPOINT_ADMIN_TOKEN, \
            TOUCHPOINT_CORS_ORIGINS, TOUCHPOINT_PUBLIC_URL, TOUCHPOINT_TLS_CERT, TOUCHPOINT_TLS_KEY, \
            TOUCHPOINT_METRICS_TOKEN, TOUCHPOINT_IDENTITY_SECRET, TOUCHPOINT_RETENTION_DAYS.
            """
    )

    @Option(help: "Address to listen on (default 127.0.0.1; env TOUCHPOINT_HOST).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (default 8080; env TOUCHPOINT_PORT).")
    var port: Int?

    @Option(help: "Data directory for SQLite and credentials (default ./touchpoint-data; env TOUCHPOINT_DATA).")
    var data: String?

    @Option(help: "postgres://user@host:port/database to store in PostgreSQL (env TOUCHPOINT_DATABASE_URL).")
    var database: String?

    @Option(
        help: """
            clickhouse://host:8123/database to keep the events in ClickHouse as well, for the insights; \
            needs --database (env TOUCHPOINT_EVENTS).
            """)
    var events: String?

    @Option(
        help: """
            Seconds one of an insight's queries may run in ClickHouse (--events) before it is stopped and \
            answered 422 query_too_slow (env TOUCHPOINT_EVENTS_QUERY_TIME_LIMIT; default 60).
            """)
    var eventsQueryTimeLimit: Double?

    @Option(help: "Write key of the default source (env TOUCHPOINT_WRITE_KEY; default: kept in the data directory).")
    var writeKey: String?

    @Option(help: "Admin token for the query API and config writes (env TOUCHPOINT_ADMIN_TOKEN).")
    var adminToken: String?

    @Option(help: "Cache-Control max-age of config documents, in seconds.")
    var configMaxAge: Int = 60

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(
        help: """
            Comma-separated browser origins (https://shop.example.com) whose pages may send events and read \
            settings and config (default: any, since write keys are public; env TOUCHPOINT_CORS_ORIGINS).
            """)
    var corsOrigins: String?

    @Option(
        help: """
            The collector's public base URL, named as apiHost in the settings Segment's SDKs fetch \
            (default: the request's Host; env TOUCHPOINT_PUBLIC_URL).
            """)
    var publicURL: String?

    @Option(help: "PEM certificate chain to serve HTTPS directly; needs --tls-key (env TOUCHPOINT_TLS_CERT).")
    var tlsCert: String?

    @Option(help: "PEM private key of --tls-cert (env TOUCHPOINT_TLS_KEY).")
    var tlsKey: String?

    @Option(help: "Seconds a client may take to send a request's head (default 10).")
    var headTimeout: Double?

    @Option(help: "Seconds a client may take to send a request's body after its head (default 30).")
    var bodyTimeout: Double?

    @Option(help: "Seconds a keep-alive connection may stay silent between requests (default 60).")
    var idleTimeout: Double?

    @Option(help: "Most connections open at once; beyond it a new one is answered 503 (default 1024).")
    var maxConnections: Int?

    @Option(
        help: """
            Secret the app's backend signs user ids with, for per-user scenario documents \
            (env TOUCHPOINT_IDENTITY_SECRET; default: none, so there are none).
            """)
    var identitySecret: String?

    @Option(
        help:
            "Days of events and sessions to keep; older ones are deleted in the background (env TOUCHPOINT_RETENTION_DAYS; default: all)."
    )
    var retentionDays: Int?

    @Option(
        help:
            "IANA time zone in which the default source's days, weeks and months begin, such as Europe/Berlin (env TOUCHPOINT_TIME_ZONE; default UTC)."
    )
    var timeZone: String?

    @Option(
        help: """
            Event properties whose values the default source's breakdowns keep by minute and day, \
            comma-separated, such as plan,country (env TOUCHPOINT_ROLLUP_PROPERTIES; default: none).
            """)
    var rollupProperties: String?

    @Option(help: "Bearer token /metrics requires (env TOUCHPOINT_METRICS_TOKEN; default: /metrics is open).")
    var metricsToken: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var configuration = CollectorConfiguration(validators: .touchpoint)
        configuration.host = host ?? environment["TOUCHPOINT_HOST"] ?? configuration.host
        if let port {
            guard (0...65535).contains(port) else {
                throw ValidationError("--port: \(port) is not a port number (0…65535)")
            }
            configuration.port = port
        } else if let text = environment["TOUCHPOINT_PORT"] {
            configuration.port = try Self.port(text)
        }
        if let data = data ?? environment["TOUCHPOINT_DATA"] {
            configuration.dataDirectory = URL(fileURLWithPath: data, isDirectory: true).standardizedFileURL
        }
        configuration.databaseURL = database ?? environment["TOUCHPOINT_DATABASE_URL"]
        configuration.eventsURL = events ?? environment["TOUCHPOINT_EVENTS"]
        if let limit = try Self.eventsQueryTimeLimit(
            eventsQueryTimeLimit, environment: environment["TOUCHPOINT_EVENTS_QUERY_TIME_LIMIT"])
        {
            configuration.eventsQueryTimeLimit = limit
        }
        configuration.writeKey = writeKey ?? environment["TOUCHPOINT_WRITE_KEY"]
        configuration.adminToken = adminToken ?? environment["TOUCHPOINT_ADMIN_TOKEN"]
        guard configMaxAge >= 0 else { throw ValidationError("--config-max-age: \(configMaxAge) is negative") }
        configuration.configMaxAge = configMaxAge
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError(
                "--log-level: \(logLevel) is not one of trace, debug, info, notice, warning, error, critical")
        }
        configuration.logger.logLevel = level
        if let text = corsOrigins ?? environment["TOUCHPOINT_CORS_ORIGINS"] {
            configuration.corsOrigins = try Self.origins(text)
        }
        if let text = publicURL ?? environment["TOUCHPOINT_PUBLIC_URL"] {
            configuration.publicURL = try Self.publicURL(text)
        }
        configuration.tls = try Self.tls(
            certificate: tlsCert ?? environment["TOUCHPOINT_TLS_CERT"], key: tlsKey ?? environment["TOUCHPOINT_TLS_KEY"]
        )
        configuration.connectionLimits = try Self.connectionLimits(
            head: headTimeout, body: bodyTimeout, idle: idleTimeout, maximumConnections: maxConnections)
        configuration.metricsToken = metricsToken ?? environment["TOUCHPOINT_METRICS_TOKEN"]
        configuration.identitySecret = identitySecret ?? environment["TOUCHPOINT_IDENTITY_SECRET"]
        if let days = retentionDays {
            configuration.retentionDays = days
        } else if let text = environment["TOUCHPOINT_RETENTION_DAYS"] {
            guard let days = Int(text) else {
                throw ValidationError("TOUCHPOINT_RETENTION_DAYS: \(text) is not a number of days")
            }
            configuration.retentionDays = days
        }

        configuration.timeZone = timeZone ?? environment["TOUCHPOINT_TIME_ZONE"] ?? configuration.timeZone
        if let text = rollupProperties ?? environment["TOUCHPOINT_ROLLUP_PROPERTIES"] {
            configuration.rollupProperties = text.split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        // A secret, so from the environment only (not the command line, which `ps` shows).
        configuration.suppressionKey = environment["TOUCHPOINT_SUPPRESSION_KEY"]

        try await CollectorServer(configuration: configuration).run { collector in
            let lines = [
                "Touchpoint collector listening on \(collector.baseURL.absoluteString)",
                "  storage:     \(collector.storageDescription)",
                "  write key:   \(collector.writeKey)",
                "  admin token: \(collector.adminToken)",
                "Send events to \(collector.baseURL.absoluteString)/v1/batch (HTTP Basic, write key as user name).",
                "Dashboard: \(collector.baseURL.absoluteString)/dashboard (sign in with the admin token).",
                "Stop with Ctrl-C.",
            ]
            // Unbuffered, so a script or test reading the pipe sees it at once.
            FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        }
    }

    /// The origins of `--cors-origins`: each `http` or `https`, a host, an optional port, no path.
    /// - Throws: `ValidationError` naming the first that is not.
    static func origins(_ text: String) throws -> [String] {
        let origins = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !origins.isEmpty else { throw ValidationError("--cors-origins: no origin given") }
        for origin in origins {
            guard let url = URL(string: origin), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host?.isEmpty == false, url.path.isEmpty || url.path == "/", url.query == nil
            else {
                throw ValidationError(
                    "--cors-origins: \(origin) is not an origin (scheme://host[:port], e.g. https://shop.example.com)")
            }
        }
        return origins
    }

    /// The URL of `--public-url`: `http` or `https` with a host.
    /// - Throws: `ValidationError` when it is not.
    static func publicURL(_ text: String) throws -> URL {
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.host?.isEmpty == false
        else {
            throw ValidationError("--public-url: \(text) is not an http or https URL with a host")
        }
        return url
    }

    /// `--tls-cert` and `--tls-key`: both or neither.
    /// - Throws: `ValidationError` naming the one that is missing.
    static func tls(certificate: String?, key: String?) throws -> CollectorTLS? {
        switch (certificate, key) {
        case (nil, nil): return nil
        case (let certificate?, let key?): return CollectorTLS(certificateChainPath: certificate, privateKeyPath: key)
        case (.some, nil): throw ValidationError("--tls-cert needs --tls-key (the certificate's private key)")
        case (nil, .some): throw ValidationError("--tls-key needs --tls-cert (the certificate chain)")
        }
    }

    /// `--events-query-time-limit`, else `TOUCHPOINT_EVENTS_QUERY_TIME_LIMIT`, in seconds; nil when
    /// neither is given. ClickHouse's `max_execution_time` counts whole seconds, so at least 1; at
    /// most a day.
    /// - Throws: `ValidationError` naming the option or variable and its value.
    static func eventsQueryTimeLimit(_ option: Double?, environment: String?) throws -> Duration? {
        let name: String
        let seconds: Double
        if let option {
            (name, seconds) = ("--events-query-time-limit", option)
        } else if let environment {
            guard let value = Double(environment.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("TOUCHPOINT_EVENTS_QUERY_TIME_LIMIT: \(environment) is not a number of seconds")
            }
            (name, seconds) = ("TOUCHPOINT_EVENTS_QUERY_TIME_LIMIT", value)
        } else {
            return nil
        }
        guard seconds.isFinite, seconds >= 1, seconds <= 86_400 else {
            throw ValidationError("\(name): \(seconds) is not a number of seconds from 1 to 86400")
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// The connection limits of `--head-timeout`, `--body-timeout`, `--idle-timeout` and
    /// `--max-connections`, each defaulting to ``ConnectionLimits/standard``'s.
    /// - Throws: `ValidationError` naming an option that is not positive.
    static func connectionLimits(
        head: Double?, body: Double?, idle: Double?, maximumConnections: Int?
    ) throws -> ConnectionLimits {
        var limits = ConnectionLimits.standard
        for (option, seconds, keyPath) in [
            ("--head-timeout", head, \ConnectionLimits.headTimeout), ("--body-timeout", body, \.bodyTimeout),
            ("--idle-timeout", idle, \.idleTimeout),
        ] {
            guard let seconds else { continue }
            guard seconds > 0, seconds.isFinite else {
                throw ValidationError("\(option): \(seconds) is not a number of seconds above zero")
            }
            limits[keyPath: keyPath] = .milliseconds(Int64((seconds * 1000).rounded(.up)))
        }
        if let maximumConnections {
            guard maximumConnections > 0 else {
                throw ValidationError("--max-connections: \(maximumConnections) is not a count above zero")
            }
            limits.maximumConnections = maximumConnections
        }
        return limits
    }

    private static func port(_ text: String) throws -> Int {
        guard let port = Int(text), (0...65535).contains(port) else {
            throw ValidationError("TOUCHPOINT_PORT: \(text) is not a port number (0…65535)")
        }
        return port
    }
}
