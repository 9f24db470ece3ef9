import Foundation

/// The collector's read side, for the HTTP query API and for Swift callers such as a dashboard.
///
/// ```swift
/// let running = try await CollectorServer(configuration: configuration).start()
/// let surveys = try await running.services.query.surveyResults(source: "default", range: .all)
/// ```
public final class CollectorQuery: Sendable {
    let storage: any CollectorStorage

    init(storage: any CollectorStorage) {
        self.storage = storage
    }

    /// Sessions, newest first; of one user when `user` is set.
    public func sessions(source: String, user: UserReference? = nil, page: PageRequest = PageRequest()) async throws
        -> Page<SessionSummary>
    {
        try await storage.sessions(source: source, filter: SessionFilter(user: user), page: page)
    }

    /// Sessions, newest first, narrowed by user, time range and an event name they contain.
    public func sessions(source: String, filter: SessionFilter, page: PageRequest = PageRequest()) async throws
        -> Page<SessionSummary>
    {
        try await storage.sessions(source: source, filter: filter, page: page)
    }

    /// One session's events in the order the collector received them (for the SDK: log order).
    public func sessionEvents(source: String, sessionId: String, page: PageRequest = PageRequest()) async throws
        -> Page<StoredEvent>
    {
        try await storage.sessionEvents(source: source, sessionId: sessionId, page: page)
    }

    /// Events filtered by name and time range, ordered by the minute of their (skew-corrected)
    /// time and, within a minute, in the order the collector received them.
    public func events(source: String, filter: EventFilter = EventFilter(), page: PageRequest = PageRequest())
        async throws -> Page<StoredEvent>
    {
        try await storage.events(source: source, filter: filter, page: page)
    }

    /// Every survey's results in `range`, by survey id.
    public func surveyResults(source: String, range: TimeRange = .all) async throws -> [SurveyResult] {
        var results: [String: SurveyResult] = [:]
        for row in try await storage.surveyTallies(source: source, range: range) {
            var result = results[row.surveyId] ?? SurveyResult(surveyId: row.surveyId)
            switch row.event {
            case "survey_presented":
                result.presented += row.count
            case "survey_dismissed":
                result.dismissed += row.count
            case "survey_response":
                result.responded += row.count
                if row.responseType == "text" {
                    result.textAnswers += row.count
                } else if let option = row.option {
                    result.choices[option, default: 0] += row.count
                }
            default:
                break
            }
            results[row.surveyId] = result
        }
        return results.values.sorted { $0.surveyId < $1.surveyId }
    }

    /// One survey's free-text answers by minute and then arrival, or the reverse (newest first)
    /// when `newestFirst` is set.
    public func surveyTextAnswers(
        source: String, surveyId: String, range: TimeRange = .all, newestFirst: Bool = false,
        page: PageRequest = PageRequest()
    ) async throws -> Page<SurveyTextAnswer> {
        try await storage.surveyTextAnswers(
            source: source, surveyId: surveyId, range: range, newestFirst: newestFirst, page: page)
    }

    /// Every promoted app's impressions, taps and click-through in `range`, by app id.
    public func promoResults(source: String, range: TimeRange = .all) async throws -> [PromoResult] {
        var results: [String: PromoResult] = [:]
        for row in try await storage.promoTallies(source: source, range: range) {
            var result = results[row.appID] ?? PromoResult(appID: row.appID)
            var counts = result.byPromotingApp[row.currentAppID ?? "", default: PromoCounts()]
            if row.event == "promo_tap" {
                result.taps += row.count
                counts.taps += row.count
            } else {
                result.impressions += row.count
                counts.impressions += row.count
            }
            result.byPromotingApp[row.currentAppID ?? ""] = counts
            results[row.appID] = result
        }
        return results.values.sorted { $0.appID < $1.appID }
    }

    /// Events per minute in `range` (bounded by the caller: the dashboard asks for hours), oldest
    /// first; minutes without events are left out.
    public func eventsPerMinute(source: String, range: TimeRange) async throws -> [MinuteCount] {
        try await storage.eventsPerMinute(source: source, range: range)
    }

    /// How many sessions had an event at or after `since`.
    public func activeSessionCount(source: String, since: Date) async throws -> Int {
        try await storage.activeSessionCount(source: source, since: since)
    }

    /// How many events and sessions `source` has stored.
    public func counts(source: String) async throws -> StorageCounts {
        try await storage.counts(source: source)
    }

    /// A page of an already computed list sorted by `key`: items after the cursor (a key).
    static func page<Item>(_ items: [Item], page: PageRequest, key: (Item) -> String) -> Page<Item> {
        let rest = page.cursor.map { cursor in items.filter { key($0) > cursor } } ?? items
        guard rest.count > page.limit else { return Page(items: rest, nextCursor: nil) }
        let kept = Array(rest.prefix(page.limit))
        return Page(items: kept, nextCursor: kept.last.map(key))
    }
}
