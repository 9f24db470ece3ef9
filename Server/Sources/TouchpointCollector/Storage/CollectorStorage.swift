import Foundation
import Logging

/// Where the collector keeps events, sessions, people, remote configs and scenario state: every
/// role below, which one implementation (``SQLCollectorStorage``) plays over two databases (SQLite
/// for one machine, PostgreSQL for several collectors on one database), each bringing its own
/// ``EventWriter`` and ``InsightEngine``. A client holds only the roles it uses; a test fakes a
/// role, not the whole storage.
protocol CollectorStorage: EventIngest, ConfigDocuments, EventQueries, PeopleStore, InsightStore, SavedStore,
    StorageOperations
{}

/// Storing what ingest accepted: the role of ``IngestService``.
protocol EventIngest: Sendable {
    /// `sqlite` or `postgres`, for `/health` and logs.
    var backendName: String { get }
    /// What the database's event writer measures, for `/metrics` (Prometheus text format 0.0.4;
    /// ``EventWriter/metrics()``).
    func writerMetrics() -> String
    /// Stores the messages that are new for `source`.
    /// - Returns: one flag per message, true when it was stored now, false when it was already
    ///   stored (by an earlier request, another collector, or earlier in the same array).
    func insert(_ messages: [IngestMessage], source: String) async throws -> [Bool]
}

/// The remote configuration's documents and the scenario store's states: the role of
/// ``RemoteConfigService`` and ``ScenarioService``.
protocol ConfigDocuments: Sendable {
    /// The stored config document of `kind` for `source`, if any.
    func config(source: String, kind: String) async throws -> StoredConfig?
    /// Replaces the config document of `config.kind` for `config.source`.
    func putConfig(_ config: StoredConfig) async throws
    /// The scenario state at `key`, if any.
    func scenario(_ key: ScenarioKey) async throws -> StoredScenario?
    /// Writes the scenario state at `key` when `condition` holds and the source stays within
    /// `quota`, atomically.
    func putScenario(
        _ key: ScenarioKey, body: String, condition: ScenarioWriteCondition, quota: ScenarioQuota, at time: Int64
    ) async throws -> ScenarioWriteResult
}

/// Events and sessions as lists and counts, the definitions and the overview's figures: what the
/// query API and the dashboard list.
protocol EventQueries: Sendable {
    /// Sessions of `source`, newest first, narrowed by `filter` (user, time, an event they contain).
    func sessions(source: String, filter: SessionFilter, page: PageRequest) async throws -> Page<SessionSummary>
    /// One session's events in the order the collector received them (for the SDK: log order).
    func sessionEvents(source: String, sessionId: String, page: PageRequest) async throws -> Page<StoredEvent>
    /// Events in time order, by name and time range.
    func events(source: String, filter: EventFilter, page: PageRequest) async throws -> Page<StoredEvent>
    /// Counts of survey events, grouped by event, survey, response type and option.
    func surveyTallies(source: String, range: TimeRange) async throws -> [SurveyTallyRow]
    /// Free-text answers to one survey, by minute then arrival (the reverse when `newestFirst`).
    func surveyTextAnswers(
        source: String, surveyId: String, range: TimeRange, newestFirst: Bool, page: PageRequest
    ) async throws -> Page<SurveyTextAnswer>
    /// Counts of promo events, grouped by event, promoted app and promoting app.
    func promoTallies(source: String, range: TimeRange) async throws -> [PromoTallyRow]
    /// How many events and sessions `source` has.
    func counts(source: String) async throws -> StorageCounts
    /// Events per minute in `range`, minutes without events left out, oldest first.
    func eventsPerMinute(source: String, range: TimeRange) async throws -> [MinuteCount]
    /// How many sessions had an event at or after `since`.
    func activeSessionCount(source: String, since: Date) async throws -> Int
    /// The names of the events `source` holds, each once, in the database's order of text.
    func eventNames(source: String) async throws -> [String]
    /// The event names (the `limit` most frequent, or only `event`), their properties and the
    /// traits `source` has stored.
    func definitions(source: String, event: String?, limit: Int) async throws -> Definitions
    /// The `limit` event names with the most events in `range`, most first.
    func topEvents(source: String, range: TimeRange, limit: Int) async throws -> [(name: String, count: Int)]
    /// Events stored per minute of their arrival in `range`, minutes without any left out, oldest first.
    func arrivalsPerMinute(source: String, range: TimeRange) async throws -> [MinuteCount]
    /// One page of `GET /v1/query/export`: NDJSON lines, in the events list's order.
    func exportPage(source: String, range: TimeRange, page: PageRequest) async throws -> Page<String>
}

/// People: profiles, their ids and sessions, the daily people and a cohort's members (people as
/// ``PersonKeys``' numbers).
protocol PeopleStore: Sendable {
    /// The people who did `event` on each local day of `days`, merges resolved.
    func dailyPeople(source: String, event: String, days: ClosedRange<Int64>) async throws -> DailyPeopleRead
    /// Everyone who did `event` before local day `day`, merges resolved.
    func people(source: String, event: String, before day: Int64) async throws -> PersonSet
    /// The anonymous ids the given user ids were seen with.
    func anonymousIDs(source: String, ofUsers userIds: [String]) async throws -> [String]
    /// Users with a profile, most recently seen first; with `search`, those whose id, anonymous ids
    /// or traits hold it (ASCII letters in either case).
    func profiles(source: String, search: String?, page: PageRequest) async throws -> Page<ProfileRow>
    /// One user's profile (first and last seen, events), if they have one.
    func profile(source: String, userId: String) async throws -> ProfileRow?
    /// The payloads of the users' calls of `type` (`identify`, `group`), in arrival order.
    func callPayloads(source: String, userIds: [String], type: MessageType) async throws
        -> [(userId: String, payload: String)]
    /// The anonymous ids merged into `userId`, in the order they were merged.
    func mergedAnonymousIDs(source: String, userId: String) async throws -> [String]
    /// The newest `limit` sessions of a user or any of their anonymous ids.
    func personSessions(source: String, userId: String, anonymousIds: [String], limit: Int) async throws
        -> [SessionSummary]
    /// The newest `limit` events of the sessions, newest first.
    func recentEvents(source: String, sessionIds: [String], limit: Int) async throws -> [StoredEvent]
    /// The people who did `event` at least `times` times in `from ..< to` (ms), as numbers.
    func peoplePerforming(source: String, event: String, times: Int, from: Int64, to: Int64) async throws
        -> Set<Int64>
    /// Every `identify` call of a user of `source` with the user's number, by user, in arrival order.
    func identifyPayloads(source: String) async throws -> [(person: Int64, payload: String)]
    /// The `limit` people of `numbers` after `after` (an id) in id order: a cohort's members page.
    func people(source: String, numbers: Set<Int64>, after: String?, limit: Int) async throws -> [CohortMember]
}

/// The insights that read events: the engine of the store that holds them (``InsightEngine``),
/// and the rollup of kept values that answers some breakdowns without it.
protocol InsightStore: Sendable {
    /// What answers the insights that read events (trends, funnels, paths): the engine of the
    /// store that holds them, chosen when the storage opened.
    var insights: any InsightEngine { get }
    /// A breakdown's rows from the rollup of a kept property's values (nil: the events must answer).
    func trendFromValueRollup(source: String, query: TrendQuery) async throws -> [TrendRow]?
}

/// Saved cohorts, insights and dashboards (``SavedLibrary`` checks what is written; these only
/// store it): `id` nil lists the source's, by name; saving one whose id is 0 adds it, else
/// replaces it (nil: no such one); deleting says whether there was one.
protocol SavedStore: Sendable {
    /// The source's cohorts by name, or the one with `id`.
    func cohorts(source: String, id: Int64?) async throws -> [Cohort]
    /// Adds (id 0) or replaces a cohort; nil when there is no cohort of that id.
    func saveCohort(source: String, _ cohort: Cohort) async throws -> Cohort?
    /// Deletes a cohort; false when there was none.
    func deleteCohort(source: String, id: Int64) async throws -> Bool
    /// The source's saved insights by name, or the one with `id`.
    func insights(source: String, id: Int64?) async throws -> [SavedInsight]
    /// Adds (id 0) or replaces a saved insight; nil when there is none of that id.
    func saveInsight(source: String, _ insight: SavedInsight) async throws -> SavedInsight?
    /// Deletes a saved insight and takes it off every dashboard; false when there was none.
    func deleteInsight(source: String, id: Int64) async throws -> Bool
    /// The source's dashboards by name, or the one with `id`.
    func dashboards(source: String, id: Int64?) async throws -> [SavedDashboard]
    /// Adds (id 0) or replaces a dashboard; nil when there is none of that id.
    func saveDashboard(source: String, _ dashboard: SavedDashboard) async throws -> SavedDashboard?
    /// Deletes a dashboard; false when there was none.
    func deleteDashboard(source: String, id: Int64) async throws -> Bool
}

/// Keeping the database: retention, a user's deletion and suppressions, backfills of what is
/// kept at ingest, health and closing.
protocol StorageOperations: Sendable {
    /// Deletes at most `limit` events of `source` whose minute is before `beforeMinute`.
    /// - Returns: how many it deleted (fewer than `limit`: none of that age is left).
    func deleteEvents(source: String, beforeMinute: Int64, limit: Int) async throws -> Int
    /// Deletes at most `limit` sessions of `source` whose last event is before `before` (ms).
    /// - Returns: how many it deleted.
    func deleteSessions(source: String, lastBefore before: Int64, limit: Int) async throws -> Int
    /// Drops the months of every source's events that end by `instant` (ms) from the store the
    /// events are also kept in (ClickHouse's monthly partitions); nothing when there is none.
    func dropEventStoreMonths(endingBy instant: Int64) async throws
    /// Hides `source`'s events before `instant` (ms) in the store the events are also kept in,
    /// which deletes them by whole months (``ClickHouseEvents/cut(source:before:)``); nothing when
    /// there is none.
    func cutEventStore(source: String, before instant: Int64) async throws
    /// Deletes `source`'s daily people (``DailyPeopleRollup``) before local day `day`.
    func deleteDailyPeople(source: String, before day: Int64) async throws
    /// Sets each source's calendar and builds what a new time zone leaves to build, in the background.
    func prepareDailyPeople(calendars: [String: SourceCalendar], logger: Logger, build: Bool) async throws
    /// Deletes the ids' events and sessions and the user ids' scenario documents, records the
    /// request and the ids it suppresses, in one transaction.
    func deleteUserData(
        _ deletion: StoredDeletion, userIds: [String], anonymousIds: [String], suppress: [SuppressedID]
    ) async throws -> DeletedData
    /// Replaces a recorded deletion request's JSON.
    func updateDeletion(id: String, body: String) async throws
    /// Ends the suppression a request set; false when there is no such request.
    func liftSuppression(requestId: String, at time: Int64) async throws -> Bool
    /// Hashes the ids kept in plain text before schema 20 (suppressions, deletion records).
    /// Records the suppression key's fingerprint the first time; later, checks it.
    /// - Throws: ``CollectorError`` `invalidConfiguration` when the database's hashes were made
    ///   with another key.
    func checkSuppressionKey(_ key: SuppressionKey) async throws
    /// Replaces the ids kept in plain text before schema 20 by their keyed hashes (``SuppressionKey``).
    func hashPlainDeletions(_ key: SuppressionKey) async throws
    /// Makes the event writer forget who it counted in the daily people (another collector
    /// deleted people).
    func forgetDailyPeople()
    /// Every suppressed id.
    func suppressedIDs() async throws -> [SuppressedID]
    /// A source's deletion requests, newest first (or the one with `id`).
    func deletions(source: String, id: String?) async throws -> [StoredDeletion]
    /// Sets the properties each source's breakdowns keep, by source.
    func prepareValueRollup(properties: [String: [String]], logger: Logger, build: Bool) async throws
    /// Counts the next `limit` events stored before the definitions were kept (``DefinitionsBackfill``).
    func backfillDefinitions(limit: Int) async throws -> DefinitionsBackfill.Progress
    /// Counts the events stored before the events per minute were kept whose seqs are among the
    /// next `limit` (``EventMinutes``).
    func backfillEventMinutes(limit: Int) async throws -> BackfillProgress
    /// Checks that the database answers.
    func ping() async throws
    /// Checks that the store the events are also kept in answers (ClickHouse, with `--events`);
    /// succeeds when there is none.
    func pingEventStore() async throws
    /// The newest schema version the database records (the collector's own when it is current).
    func schemaVersion() async throws -> Int
    /// Closes the database; nothing may be called afterwards.
    func close() async throws
}

extension EventQueries {
    /// Sessions of `source`, newest first, optionally of one user or anonymous id.
    func sessions(source: String, user: UserReference?, page: PageRequest) async throws -> Page<SessionSummary> {
        try await sessions(source: source, filter: SessionFilter(user: user), page: page)
    }

    /// Free-text answers to one survey, in time order.
    func surveyTextAnswers(source: String, surveyId: String, range: TimeRange, page: PageRequest) async throws
        -> Page<SurveyTextAnswer>
    {
        try await surveyTextAnswers(source: source, surveyId: surveyId, range: range, newestFirst: false, page: page)
    }
}
