/// A source of events: one app or site, identified by its write key.
///
/// Every stored event, config document and scenario state belongs to one source. The default
/// source is named `default`.
public struct CollectorSource: Sendable, Hashable {
    /// The source's name, used in the query API (`?source=`) and the database.
    public var id: String
    /// The secret a client sends to write to this source (HTTP Basic user name, or `writeKey`).
    public var writeKey: String
    /// The secret the app's backend signs user ids with (see ``IdentityVerification``); nil
    /// leaves the source without per-user scenario documents.
    public var identitySecret: String?
    /// Days of events this source keeps; nil takes ``CollectorConfiguration/retentionDays``.
    public var retentionDays: Int?
    /// The IANA time zone (`Europe/Berlin`) in which the source's days, weeks and months begin, for
    /// every insight; `UTC` by default. Changing it rebuilds the source's activity rollup in the
    /// background.
    public var timeZone: String
    /// The event properties whose values the source's breakdowns keep by minute and by day (names
    /// such as `plan`, ``ValueRollup``): a trend broken down by one of them reads a row per value
    /// and minute instead of every event, once the events stored before it was first kept are
    /// counted in the background. Each costs ingest a row per event's value and minute, so name the
    /// few properties a team breaks down by.
    public var rollupProperties: [String]

    /// Creates a source.
    public init(
        id: String, writeKey: String, identitySecret: String? = nil, retentionDays: Int? = nil,
        timeZone: String = "UTC", rollupProperties: [String] = []
    ) {
        self.id = id
        self.writeKey = writeKey
        self.identitySecret = identitySecret
        self.retentionDays = retentionDays
        self.timeZone = timeZone
        self.rollupProperties = rollupProperties
    }

    /// The name of the source the collector's own write key belongs to.
    public static let defaultID = "default"
}

/// The sources a collector accepts, by write key.
struct SourceRegistry: Sendable {
    private let byWriteKey: [String: String]
    private let ids: Set<String>

    init(_ sources: [CollectorSource]) {
        var byWriteKey: [String: String] = [:]
        for source in sources where byWriteKey[source.writeKey] == nil { byWriteKey[source.writeKey] = source.id }
        self.byWriteKey = byWriteKey
        ids = Set(sources.map(\.id))
    }

    /// The source `writeKey` belongs to, or nil for an unknown key.
    func source(forWriteKey writeKey: String) -> String? { byWriteKey[writeKey] }

    /// Whether a source of this name exists.
    func contains(id: String) -> Bool { ids.contains(id) }
}
