/// A stored remote-config document.
struct StoredConfig: Sendable, Hashable {
    var source: String
    var kind: String
    /// The document as stored (the bytes the ETag covers).
    var body: String
    /// SHA-256 of `body`, lowercase hex, without quotes.
    var etag: String
    /// Milliseconds since 1970.
    var updatedAt: Int64
}

/// Where a scenario's state lives: per source, namespace and scenario id.
struct ScenarioKey: Sendable, Hashable {
    var source: String
    var namespace: String
    var scenarioId: String
}

/// A stored scenario state with its version counter.
struct StoredScenario: Sendable, Hashable {
    var body: String
    var version: Int64
}

/// When a scenario write may happen (HTTP's conditional request headers).
enum ScenarioWriteCondition: Sendable, Hashable {
    /// `If-None-Match: *`: only when nothing is stored yet.
    case create
    /// `If-Match: "<n>"`: only when the stored version is `n`.
    case version(Int64)
    /// `If-Match: *`: only when something is stored, whatever its version.
    case exists
}

/// What a conditional scenario write did.
enum ScenarioWriteResult: Sendable, Hashable {
    /// Written; the new version.
    case written(version: Int64)
    /// The condition did not hold; the stored version, if anything is stored.
    case preconditionFailed(current: Int64?)
    /// The write would take the source past its quota; what it holds now.
    case quotaExceeded(documents: Int64, bytes: Int64)
}

/// Counts of stored rows for a source.
public struct StorageCounts: Sendable, Hashable {
    /// Stored events.
    public var events: Int
    /// Known sessions.
    public var sessions: Int

    /// Creates counts.
    public init(events: Int, sessions: Int) {
        self.events = events
        self.sessions = sessions
    }
}

/// One group of survey events: how many `event`s for survey `surveyId` with this type and option.
struct SurveyTallyRow: Sendable, Hashable {
    var event: String
    var surveyId: String
    var responseType: String?
    var option: String?
    var count: Int
}

/// One group of promo events: how many `event`s for promoted app `appID` shown in `currentAppID`.
struct PromoTallyRow: Sendable, Hashable {
    var event: String
    var appID: String
    var currentAppID: String?
    var count: Int
}
