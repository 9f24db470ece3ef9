import Foundation
import Logging
import TouchpointCore

/// Everything a collector needs to start: where to listen, where to store, who may write and read.
///
/// ```swift
/// var configuration = CollectorConfiguration(dataDirectory: directory.url)
/// configuration.port = 0  // any free port; `RunningCollector.port` tells which
/// let collector = try await CollectorServer(configuration: configuration).start()
/// ```
public struct CollectorConfiguration: Sendable {
    /// The address to listen on (default `127.0.0.1`).
    public var host: String
    /// The port to listen on (default 8080); 0 picks a free one.
    public var port: Int
    /// Where the SQLite database and the generated credentials live (default `./touchpoint-data`).
    public var dataDirectory: URL
    /// A `postgres://…` URL to store in PostgreSQL instead of SQLite.
    public var databaseURL: String?
    /// A `clickhouse://host:8123/database` URL to keep the events in ClickHouse as well, for the
    /// insights; needs ``databaseURL`` (PostgreSQL keeps sessions, people, configuration and
    /// deletions). An ingest request is acknowledged only once its events are in both.
    public var eventsURL: String? = nil
    /// How long one of an insight's queries may run in ClickHouse (``eventsURL``) before it is
    /// stopped and the request answered `422` `query_too_slow` (default 60 s; ingest's statements
    /// get 10 s, and a `503` when they take longer).
    public var eventsQueryTimeLimit: Duration = .seconds(60)
    /// The default source's write key; nil to use the one kept in the data directory (created on first start).
    public var writeKey: String?
    /// The admin token; nil to use the one kept in the data directory (created on first start).
    public var adminToken: String?
    /// More sources besides `default`, each with its own write key.
    public var additionalSources: [CollectorSource]
    /// Size limits for ingest requests and events.
    public var limits: IngestLimits
    /// `Cache-Control: max-age` for config documents, in seconds (default 60).
    public var configMaxAge: Int
    /// The validators config documents pass before they are stored.
    public var validators: ConfigValidatorRegistry
    /// Routes to add to the collector's router (a dashboard, for example).
    public var routes: [CollectorRoutes]
    /// The browser origins allowed to call the write-key routes (ingest, settings, config GETs)
    /// from pages, e.g. `https://shop.example.com`; nil (the default) allows any origin, since
    /// write keys are public. Admin routes never answer CORS.
    public var corsOrigins: [String]?
    /// The collector's public base URL (`https://collector.example.com`), named as `apiHost` in the
    /// settings document Segment's SDKs fetch; nil uses the request's `Host` header.
    public var publicURL: URL?
    /// The most PostgreSQL connections this collector opens (default 8).
    public var postgresMaximumConnections: Int
    /// Timeouts for slow and idle clients and the most connections open at once.
    public var connectionLimits: ConnectionLimits
    /// A PEM certificate chain and private key to serve HTTPS directly (no proxy); nil serves
    /// plain HTTP.
    public var tls: CollectorTLS?
    /// The default source's identity secret, which signs user ids for per-user scenario
    /// documents (see ``IdentityVerification``); nil leaves it without them.
    public var identitySecret: String?
    /// Days of events and sessions kept (older ones are deleted in the background); nil keeps
    /// everything. A source's own ``CollectorSource/retentionDays`` overrides it.
    public var retentionDays: Int?
    /// The secret suppressed ids are hashed with (``CollectorCredentials/suppressionKey``, 64 hex
    /// digits); nil keeps the one in the data directory (created on first start). Collectors
    /// sharing one PostgreSQL database need the same one.
    public var suppressionKey: String?
    /// The default source's time zone, an IANA name (`Europe/Berlin`; default `UTC`): where its
    /// days, weeks and months begin in every insight (``CollectorSource/timeZone``).
    public var timeZone: String = "UTC"
    /// The properties the default source's breakdowns keep by value
    /// (``CollectorSource/rollupProperties``; default none).
    public var rollupProperties: [String] = []
    /// How often the retention pass runs (default 10 minutes).
    public var retentionInterval: Duration = .seconds(600)
    /// How much scenario state each source may keep.
    public var scenarioQuota: ScenarioQuota = .standard
    /// A token `GET /metrics` requires as `Authorization: Bearer <token>`; nil leaves `/metrics`
    /// open (fine on 127.0.0.1, not on the internet).
    public var metricsToken: String?
    /// The clock that stamps `receivedAt` and update times.
    public var clock: any WallClock
    /// The logger for the server and storage.
    public var logger: Logger

    /// The default data directory, `./touchpoint-data`.
    public static var defaultDataDirectory: URL {
        URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("touchpoint-data")
    }

    /// The SQLite file's name inside the data directory.
    public static let sqliteFileName = "touchpoint.sqlite"

    /// Creates a configuration with the defaults: 127.0.0.1:8080, SQLite under `./touchpoint-data`.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, dataDirectory: URL = CollectorConfiguration.defaultDataDirectory,
        databaseURL: String? = nil, writeKey: String? = nil, adminToken: String? = nil,
        additionalSources: [CollectorSource] = [], limits: IngestLimits = .segment, configMaxAge: Int = 60,
        validators: ConfigValidatorRegistry = .structural, routes: [CollectorRoutes] = [],
        corsOrigins: [String]? = nil, publicURL: URL? = nil,
        postgresMaximumConnections: Int = 8, connectionLimits: ConnectionLimits = .standard, tls: CollectorTLS? = nil,
        clock: any WallClock = SystemClock(),
        logger: Logger = Logger.touchpoint("collector")
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.databaseURL = databaseURL
        self.writeKey = writeKey
        self.adminToken = adminToken
        self.additionalSources = additionalSources
        self.limits = limits
        self.configMaxAge = configMaxAge
        self.validators = validators
        self.routes = routes
        self.corsOrigins = corsOrigins
        self.publicURL = publicURL
        self.postgresMaximumConnections = postgresMaximumConnections
        self.connectionLimits = connectionLimits
        self.tls = tls
        self.clock = clock
        self.logger = logger
    }
}
