import Foundation
import HTTPTypes
import Hummingbird
import Logging
import TouchpointCore

/// The collector's parts, shared by its routes and by code that embeds it.
public final class CollectorServices: Sendable {
    /// Reads and stores ingest requests.
    public let ingest: IngestService
    /// Stores and serves the remote-config documents.
    public let configs: RemoteConfigService
    /// The scenario store's backend scope.
    public let scenarios: ScenarioService
    /// The read side: sessions, events, survey and promo results.
    public let query: CollectorQuery
    /// Request and event counters.
    public let metrics: CollectorMetrics
    /// The default source's write key and the admin token.
    public let credentials: CollectorCredentials
    /// Every source the collector accepts, `default` first.
    public let sources: [CollectorSource]
    /// `Cache-Control: max-age` for config documents, in seconds.
    public let configMaxAge: Int
    /// `sqlite` or `postgres`.
    public var storageBackend: String { storage.backendName }
    /// Events as they are stored, for live views (the dashboard's live tail).
    public let live: LiveEventFeed
    /// The collector's clock.
    public let clock: any WallClock
    /// Which browser origins may call the write-key routes.
    public let cors: CORSPolicy
    /// The public base URL named in the settings document; nil uses the request's `Host`.
    public let publicURL: URL?
    /// The bearer token `/metrics` requires; nil leaves it open.
    let metricsToken: String?
    /// Whether `signature` proves the request speaks for `userId` in `source` (the source's
    /// identity secret signed it); false when the source has no identity secret.
    func verifies(_ signature: String, userId: String, source: String) -> Bool {
        guard let secret = sources.first(where: { $0.id == source })?.identitySecret else { return false }
        return IdentityVerification.isValid(signature, userId: userId, secret: secret)
    }

    /// Where `source`'s days begin (``CollectorSource/timeZone``; UTC for a source the collector
    /// does not know).
    func calendar(of source: String) -> SourceCalendar {
        calendars[source] ?? .utc
    }

    /// Whether `source` has an identity secret.
    func hasIdentitySecret(_ source: String) -> Bool {
        sources.first(where: { $0.id == source })?.identitySecret != nil
    }

    /// Whether the collector itself serves HTTPS (`--tls-cert`).
    let servesHTTPS: Bool
    /// Deletes a user's data on request and refuses suppressed ids at ingest.
    public let deletions: DeletionService
    /// Deletes what is older than each source's retention.
    public let retention: RetentionService
    /// Saved cohorts, insights and dashboards.
    public let saved: SavedLibrary
    /// Wrong admin tokens and dashboard sign-ins, per client address.
    let secretGuesses: FailedAttemptLimiter

    let storage: any CollectorStorage
    let sourceRegistry: SourceRegistry
    /// Each source's calendar, by id (zones are checked before the services are made).
    let calendars: [String: SourceCalendar]
    let limits: IngestLimits

    /// - Parameter insights: the engine the insights ask (nil: the storage's): a test's engine.
    init(
        storage: any CollectorStorage, credentials: CollectorCredentials, additionalSources: [CollectorSource],
        configuration: CollectorConfiguration, insights: (any InsightEngine)? = nil
    ) {
        let sources =
            [
                CollectorSource(
                    id: CollectorSource.defaultID, writeKey: credentials.writeKey,
                    identitySecret: configuration.identitySecret, timeZone: configuration.timeZone,
                    rollupProperties: configuration.rollupProperties)
            ] + additionalSources
        let registry = SourceRegistry(sources)
        let metrics = CollectorMetrics()
        let live = LiveEventFeed()
        self.live = live
        self.clock = configuration.clock
        self.storage = storage
        self.credentials = credentials
        self.sources = sources
        self.sourceRegistry = registry
        var calendars: [String: SourceCalendar] = [:]
        for source in sources where calendars[source.id] == nil {
            calendars[source.id] = SourceCalendar(identifier: source.timeZone) ?? .utc
        }
        self.calendars = calendars
        self.metrics = metrics
        self.limits = configuration.limits
        self.configMaxAge = configuration.configMaxAge
        self.cors = CORSPolicy(allowedOrigins: configuration.corsOrigins)
        self.publicURL = configuration.publicURL
        self.metricsToken = configuration.metricsToken
        self.servesHTTPS = configuration.tls != nil
        self.secretGuesses = FailedAttemptLimiter(clock: configuration.clock, logger: configuration.logger)
        // The key is checked before the services are made (`CollectorServer`).
        let deletions = DeletionService(
            storage: storage, clock: configuration.clock,
            key: SuppressionKey(hex: credentials.suppressionKey) ?? SuppressionKey(
                hex: String(repeating: "0", count: 64))!)
        self.deletions = deletions
        ingest = IngestService(
            storage: storage, sources: registry, metrics: metrics, limits: configuration.limits,
            clock: configuration.clock, live: live, deletions: deletions)
        configs = RemoteConfigService(
            storage: storage, validators: configuration.validators, clock: configuration.clock)
        scenarios = ScenarioService(
            storage: storage, clock: configuration.clock, maximumBodyBytes: configuration.limits.maximumRequestBytes,
            quota: configuration.scenarioQuota)
        query = CollectorQuery(storage: storage, insights: insights, clock: configuration.clock)
        saved = SavedLibrary(storage: storage, clock: configuration.clock)
        retention = RetentionService(
            storage: storage, sources: sources, defaultDays: configuration.retentionDays, clock: configuration.clock,
            logger: configuration.logger)
    }

    /// What must be done before the first request, by the server and by anything that routes
    /// requests to these services: the suppressed ids loaded, and each source's calendar given
    /// to the storage, so that every event's day is counted in its source's zone (what a new zone
    /// or the upgrade to the daily people leaves to build is built in the background).
    func prepare(logger: Logger) async throws {
        try await storage.checkSuppressionKey(deletions.key)
        try await deletions.load()
        // The background build starts once both are prepared (it counts the kept properties too).
        try await storage.prepareDailyPeople(calendars: calendars, logger: logger, build: false)
        var kept: [String: [String]] = [:]
        for source in sources where kept[source.id] == nil { kept[source.id] = source.rollupProperties }
        try await storage.prepareValueRollup(properties: kept, logger: logger, build: true)
    }

    // MARK: Authentication

    /// Checks `Authorization: Bearer <admin token>`; wrong tokens are limited per client address
    /// (10 a minute, then `429` with `Retry-After`; a request without a token is not counted).
    /// - Throws: ``CollectorError`` `unauthorized` when it is missing or wrong, `too_many_requests`
    ///   when the client's address has guessed too often.
    public func authenticateAdmin(_ request: Request, context: CollectorRequestContext) throws {
        // A request without any token is not a guess, so it is not counted.
        let right =
            try request.headers[.authorization] != nil
            && secretGuesses.attempt("admin token", from: context.clientAddress) {
                Self.bearer(request, matches: credentials.adminToken)
            }
        guard right else {
            throw CollectorError(
                .unauthorized, "missing or wrong admin token: send Authorization: Bearer <admin token>")
        }
    }

    /// `http` or `https`, as the client reached the collector: the public URL's scheme, else
    /// `https` when the collector serves TLS itself, else what a proxy in front says
    /// (`X-Forwarded-Proto`), else `http`.
    public func scheme(of request: Request) -> String {
        if let scheme = publicURL?.scheme?.lowercased() { return scheme }
        if servesHTTPS { return "https" }
        let forwarded = HTTPField.Name("X-Forwarded-Proto").flatMap { request.headers[$0] }?.lowercased()
        return forwarded == "https" ? "https" : "http"
    }

    /// Checks `Authorization: Bearer <metrics token>` when the collector has one.
    /// - Throws: ``CollectorError`` `unauthorized` when it is missing or wrong.
    func authenticateMetrics(_ request: Request) throws {
        guard let metricsToken else { return }
        guard Self.bearer(request, matches: metricsToken) else {
            throw CollectorError(
                .unauthorized, "missing or wrong metrics token: send Authorization: Bearer <metrics token>")
        }
    }

    /// The source named by the request's write key: HTTP Basic (`writeKey:`), or, when
    /// `allowQuery` is set, a `?writeKey=` query parameter.
    /// - Returns: the source id, or nil when the request carries no write key at all.
    /// - Throws: ``CollectorError`` `unauthorized` for a key that no source has, or an
    ///   `Authorization` header that is not Basic.
    public func writeKeySource(_ request: Request, allowQuery: Bool) throws -> String? {
        if let header = request.headers[.authorization] {
            guard let key = Self.basicUser(header), let source = sourceRegistry.source(forWriteKey: key) else {
                throw IngestService.unauthorized
            }
            return source
        }
        if allowQuery, let key = try request.parameters().get("writeKey") {
            guard let source = sourceRegistry.source(forWriteKey: key) else { throw IngestService.unauthorized }
            return source
        }
        return nil
    }

    /// The source named by the request's write key (HTTP Basic or `?writeKey=`).
    /// - Throws: ``CollectorError`` `unauthorized` when there is none or it is unknown.
    public func requireWriteKeySource(_ request: Request) throws -> String {
        guard let source = try writeKeySource(request, allowQuery: true) else { throw IngestService.unauthorized }
        return source
    }

    /// The source an admin request is about: `?source=<id>`, `?writeKey=<key>`, or `default`.
    /// - Throws: ``CollectorError`` `not_found` for a source or key the collector does not know.
    public func adminSource(_ request: Request) throws -> String {
        let parameters = try request.parameters()
        if let id = parameters.get("source") {
            guard sourceRegistry.contains(id: id) else {
                throw CollectorError(.notFound, "source: no source named \"\(id)\"", path: "source")
            }
            return id
        }
        if let key = parameters.get("writeKey") {
            guard let id = sourceRegistry.source(forWriteKey: key) else {
                throw CollectorError(.notFound, "writeKey: no source has this write key", path: "writeKey")
            }
            return id
        }
        return CollectorSource.defaultID
    }

    /// Whether the request carries `Authorization: Bearer <token>` with exactly this token.
    static func bearer(_ request: Request, matches token: String) -> Bool {
        guard let header = request.headers[.authorization], header.count > 7, header.prefix(7).lowercased() == "bearer "
        else { return false }
        return constantTimeEquals(String(header.dropFirst(7)), token)
    }

    /// The user name of an HTTP Basic `Authorization` header (`Basic base64(user:password)`).
    static func basicUser(_ header: String) -> String? {
        guard header.count > 6, header.prefix(6).lowercased() == "basic " else { return nil }
        let encoded = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard let data = Data(base64Encoded: encoded) else { return nil }
        let decoded = String(decoding: data, as: UTF8.self)
        let user = decoded.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        return user?.isEmpty == false ? user : nil
    }

    /// Compares two secrets in time independent of where they differ.
    static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count, !right.isEmpty else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
