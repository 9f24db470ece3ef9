import Foundation
import TouchpointCore

/// The collector's read side, for the HTTP query API and for Swift callers such as a dashboard.
///
/// ```swift
/// let running = try await CollectorServer(configuration: configuration).start()
/// let surveys = try await running.services.query.surveyResults(source: "default", range: .all)
/// ```
public final class CollectorQuery: Sendable {
    let storage: any EventQueries & PeopleStore & InsightStore & SavedStore
    /// What answers the insights that read events: the storage's engine, unless another is given.
    let insights: any InsightEngine
    /// The time cohorts are worked out at ("in the last 7 days").
    let clock: any WallClock

    /// - Parameter insights: the engine the insights ask (nil: the storage's,
    ///   ``InsightStore/insights``).
    init(
        storage: any EventQueries & PeopleStore & InsightStore & SavedStore, insights: (any InsightEngine)? = nil,
        clock: any WallClock = SystemClock()
    ) {
        self.storage = storage
        self.insights = insights ?? storage.insights
        self.clock = clock
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

// MARK: People and analytics

extension CollectorQuery {
    /// Users, most recently seen first, with their merged identify traits; only those whose id,
    /// merged anonymous id or traits contain `search`, when given.
    public func people(source: String, search: String? = nil, page: PageRequest = PageRequest()) async throws
        -> Page<Person>
    {
        let rows = try await storage.profiles(source: source, search: search, page: page)
        let payloads = try await storage.callPayloads(
            source: source, userIds: rows.items.map(\.userId), type: .identify)
        var byUser: [String: [String]] = [:]
        for entry in payloads { byUser[entry.userId, default: []].append(entry.payload) }
        let people = rows.items.map { row in
            Person(
                userId: row.userId, firstSeen: Timestamp.date(milliseconds: row.firstSeen),
                lastSeen: Timestamp.date(milliseconds: row.lastSeen),
                eventCount: row.eventCount, traits: TraitMerge.merged(byUser[row.userId] ?? []), anonymousIds: [],
                groups: [:])
        }
        return Page(items: people, nextCursor: rows.nextCursor)
    }

    /// One user: traits, merged anonymous ids, groups, newest sessions (theirs and their anonymous
    /// ids') and the newest events of those sessions; nil when the user id never sent anything.
    public func person(source: String, userId: String, sessionLimit: Int = 20, eventLimit: Int = 50) async throws
        -> (person: Person, sessions: [SessionSummary], events: [StoredEvent])?
    {
        guard let row = try await storage.profile(source: source, userId: userId) else { return nil }
        let anonymousIds = try await storage.mergedAnonymousIDs(source: source, userId: userId)
        let identify = try await storage.callPayloads(source: source, userIds: [userId], type: .identify)
        let groups = try await storage.callPayloads(source: source, userIds: [userId], type: .group)
        let sessions = try await storage.personSessions(
            source: source, userId: userId, anonymousIds: anonymousIds, limit: sessionLimit)
        let events = try await storage.recentEvents(
            source: source, sessionIds: sessions.prefix(10).map(\.sessionId), limit: eventLimit)
        // Seen as an anonymous visitor before signing in counts too.
        let firstSeen = sessions.map(\.firstTimestamp).reduce(Timestamp.date(milliseconds: row.firstSeen), min)
        let lastSeen = sessions.map(\.lastTimestamp).reduce(Timestamp.date(milliseconds: row.lastSeen), max)
        let person = Person(
            userId: row.userId, firstSeen: firstSeen, lastSeen: lastSeen, eventCount: row.eventCount,
            traits: TraitMerge.merged(identify.map(\.payload)), anonymousIds: anonymousIds,
            groups: TraitMerge.groups(groups.map(\.payload)))
        return (person, sessions, events)
    }

    /// Counts per interval, optionally broken down by a property's top values.
    ///
    /// The breakdown is one pass grouping by value, with the totals counted beside it (see
    /// ``InsightEngine/trendByValue(source:query:property:limit:people:)``); only when the
    /// property has more values than get a series of their own does a second pass count the
    /// people of "other" (distinct people cannot be added up across values).
    public func trend(source: String, _ query: TrendQuery) async throws -> TrendResult {
        try await trend(source: source, query, groupLimit: Self.trendGroupLimit)
    }

    /// ``trend(source:_:)`` with the most (interval, value) pairs grouped in one pass.
    ///
    /// By days, weeks or months, each interval's people are those of the daily people
    /// (``DailyPeopleRollup``), read while the events are counted: the events' index is then
    /// read for counts only, and people cost no more with more events. By hours, both come from
    /// the events.
    func trend(source: String, _ query: TrendQuery, groupLimit: Int) async throws -> TrendResult {
        var filtered = query
        if filtered.people == nil { filtered.people = try await people(source: source, cohort: query.cohort) }
        let query = filtered
        guard !query.peopleFromEvents else { return try await trendFromEvents(source: source, query, groupLimit) }
        let window = query.math?.days ?? 1
        let days = query.range.days
        let storage = self.storage
        async let people = storage.dailyPeople(
            source: source, event: query.event, days: (days.lowerBound - window + 1)...days.upperBound)
        var result = try await trendFromEvents(source: source, query, groupLimit)
        var read = try await people
        read.people = read.people.restricted(to: query.people)
        let ranges = query.range.dayRanges(query.interval).map(\.days)
        let users = PeopleInsights.uniquePeople(read.people, days: ranges)
        let active =
            query.math.map {
                PeopleInsights.activePeople(read.people, window: $0.days, today: days.upperBound, days: ranges)
            }
        for index in result.totals.indices where index < users.count {
            result.totals[index].users = users[index]
            result.totals[index].active = active?[index]
        }
        result.partial = read.partial
        return result
    }

    /// A trend's counts (and, by hours or with filters, its people) from the events.
    private func trendFromEvents(source: String, _ query: TrendQuery, _ groupLimit: Int) async throws -> TrendResult {
        let storage = self.storage
        // The totals' people only where the daily people do not give them: otherwise the
        // totals are counted from the name-and-minute index, and no event is read for them.
        let people = query.peopleFromEvents
        @Sendable func counted() async throws -> TrendTotals {
            people
                ? try await insights.trendTotals(source: source, query: query)
                : try await insights.trendCounts(source: source, query: query)
        }
        guard let property = query.breakdown else {
            return TrendResult.assemble(query, totals: try await counted(), rows: [])
        }
        // A property the source keeps by value (``ValueRollup``): no event is read.
        if let rows = try await storage.trendFromValueRollup(source: source, query: query) {
            return TrendResult.assemble(query, totals: try await counted(), rows: rows)
        }
        let pass = try await insights.trendByValue(
            source: source, query: query, property: property, limit: groupLimit, people: people)
        // The pass's totals, or (read at once with what follows) the totals counted on their own.
        @Sendable func totals() async throws -> TrendTotals {
            if let totals = pass.totals { return totals }
            return try await counted()
        }
        async let totalsCounted = totals()
        guard let perValue = pass.rows else {
            // Too many values to group in one pass: find the top ones first.
            let top = try await insights.trendTopValues(
                source: source, query: query, property: property, limit: query.topValues)
            let rows = try await insights.trendBreakdown(
                source: source, query: query, property: property, top: top)
            return TrendResult.assemble(query, totals: try await totalsCounted, rows: rows)
        }
        var byValue: [ExactText: Int] = [:]
        for row in perValue { if let value = row.value { byValue[ExactText(value), default: 0] += row.count } }
        let top = byValue.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.prefix(query.topValues).map(\.key)
        guard byValue.count > top.count else {
            return TrendResult.assemble(query, totals: try await totalsCounted, rows: perValue)
        }
        let kept = Set(top)
        var rows = perValue.filter { row in row.value.map { kept.contains(ExactText($0)) } ?? true }
        let other = try await insights.trendBreakdown(
            source: source, query: query, property: property, top: top.map(\.text))
        rows += other.filter(\.isOther)
        return TrendResult.assemble(query, totals: try await totalsCounted, rows: rows)
    }

    /// A trend of one or more series (and the period before, when compared): each series as
    /// ``trend(source:_:)`` answers it, its value over the whole range, and the formula's lines.
    ///
    /// The period before is broken down by the values on top in the range, so that each line has
    /// its own before it.
    public func trends(source: String, _ insight: TrendInsight) async throws -> TrendInsightResult {
        var results: [TrendResult] = []
        var aggregates: [TrendCount] = []
        var previousResults: [TrendResult] = []
        var previousAggregates: [TrendCount] = []
        for series in insight.series {
            // The cohort's people read once for the series, its aggregate and the period before.
            var query = series.query
            query.people = try await people(source: source, cohort: query.cohort)
            let result = try await trend(source: source, query)
            results.append(result)
            aggregates.append(try await aggregate(source: source, query, result))
            guard let previous = insight.previous else { continue }
            let before = try await previousTrend(source: source, query, range: previous, current: result)
            previousResults.append(before)
            previousAggregates.append(try await aggregate(source: source, before.query, before))
        }
        let compared = insight.previous == nil ? nil : previousResults
        return TrendInsightResult(
            insight: insight, results: results, previousResults: compared,
            starts: results.first?.totals.map(\.start) ?? [],
            previousStarts: compared?.first?.totals.map(\.start),
            lines: TrendInsightResult.lines(
                insight, results: results, aggregates: aggregates, previous: compared,
                previousAggregates: insight.previous == nil ? nil : previousAggregates))
    }

    /// A series over `range` (the period before), counted as ``trend(source:_:)`` counts it, broken
    /// down by the values on top in `current` (the range's answer).
    private func previousTrend(source: String, _ query: TrendQuery, range: AnalyticsRange, current: TrendResult)
        async throws -> TrendResult
    {
        var query = query
        query.range = range
        var whole = query
        whole.breakdown = nil
        let totals = try await trend(source: source, whole)
        guard let property = query.breakdown else { return totals }
        let top = current.series.filter { !$0.isOther }.compactMap(\.value)
        let rows = try await insights.trendBreakdown(source: source, query: query, property: property, top: top)
        var result = TrendResult.assemble(query, totals: [:], rows: rows)
        result.totals = totals.totals
        result.partial = totals.partial
        return result
    }

    /// A series' events, people and aggregate over its whole range: added up from its intervals
    /// where they add up (events, sums), counted again where they do not (people, from the daily
    /// people by days, weeks or months without filters; averages, percentiles).
    private func aggregate(source: String, _ query: TrendQuery, _ result: TrendResult) async throws -> TrendCount {
        switch query.measure {
        case .total, .active:
            return TrendCount(count: result.totals.reduce(0) { $0 + $1.count }, users: 0)
        case .sum:
            return TrendCount(
                count: result.totals.reduce(0) { $0 + $1.count }, users: 0,
                aggregate: result.totals.reduce(0) { $0 + ($1.aggregate ?? 0) })
        case .users where !query.peopleFromEvents:
            // The range's people once: the union of its daily people, as each interval's are.
            let read = try await storage.dailyPeople(source: source, event: query.event, days: query.range.days)
            // Still being built (an upgrade, a new time zone): the events count everyone.
            if read.partial { return try await insights.trendAggregate(source: source, query: query) }
            let people = read.people.restricted(to: query.people).union(query.range.days)
            return TrendCount(count: result.totals.reduce(0) { $0 + $1.count }, users: people.count)
        case .users, .average, .median, .p90:
            return try await insights.trendAggregate(source: source, query: query)
        }
    }

    /// The most (interval, value) pairs a trend's breakdown groups in one pass.
    static let trendGroupLimit = 20_000

    /// How many people went through the funnel's steps in order.
    public func funnel(source: String, _ query: FunnelQuery) async throws -> FunnelResult {
        var query = query
        query.people = try await people(source: source, cohort: query.cohort)
        return FunnelResult.compute(query, rows: try await insights.funnelRows(source: source, query: query))
    }

    /// How many people did an event on 1, 2, … n days of each week or month (of a cohort's
    /// people, when it names one).
    public func stickiness(source: String, _ query: StickinessQuery) async throws -> StickinessResult {
        let cohort = try await people(source: source, cohort: query.cohort)
        let read = try await storage.dailyPeople(
            source: source, event: query.event, days: StickinessResult.days(of: query))
        return StickinessResult.compute(query, people: read.people.restricted(to: cohort), partial: read.partial)
    }

    /// New, returning, resurrecting and dormant people per interval (of a cohort's people, when
    /// it names one).
    public func lifecycle(source: String, _ query: LifecycleQuery) async throws -> LifecycleResult {
        let cohort = try await people(source: source, cohort: query.cohort)
        let days = LifecycleResult.days(of: query)
        let storage = self.storage
        async let before = storage.people(source: source, event: query.event, before: days.lowerBound)
        let read = try await storage.dailyPeople(source: source, event: query.event, days: days)
        var earlier = try await before
        if let cohort { earlier = earlier.intersection(PersonSet(cohort)) }
        return LifecycleResult.compute(
            query, people: read.people.restricted(to: cohort), before: earlier, partial: read.partial)
    }

    /// The retention triangle, periods that have not begun by `now` left out.
    public func retention(source: String, _ query: RetentionQuery, now: Date) async throws -> RetentionResult {
        var query = query
        query.people = try await people(source: source, cohort: query.cohort)
        let calendar = query.range.calendar
        let intervals = query.range.intervals(query.interval)
        let firstDay = calendar.firstDay(of: intervals.lowerBound, query.interval)
        let startDays = firstDay...(calendar.firstDay(of: intervals.upperBound + 1, query.interval) - 1)
        let returnDays =
            firstDay...(calendar.firstDay(of: intervals.upperBound + Int64(query.periods) + 1, query.interval) - 1)
        let storage = self.storage
        // The cohorts and the returns at once, on two of the database's connections (one read
        // when they are the same event).
        async let returns = storage.dailyPeople(source: source, event: query.returnEvent, days: returnDays)
        let start =
            query.startEvent == query.returnEvent
            ? try await returns
            : try await storage.dailyPeople(source: source, event: query.startEvent, days: startDays)
        let returned = try await returns
        return RetentionResult.compute(
            query, start: start.people.restricted(to: query.people),
            returns: returned.people.restricted(to: query.people), now: Timestamp.milliseconds(now),
            partial: start.partial || returned.partial)
    }

}

extension CollectorQuery {
    /// The event names `source` has stored (its `limit` most frequent, or only `event`), their
    /// properties and its people's traits, with counts, when each was last seen and the JSON
    /// types of their values.
    public func definitions(source: String, event: String? = nil, limit: Int = 1000) async throws -> Definitions {
        try await storage.definitions(source: source, event: event, limit: limit)
    }

    /// The `limit` event names with the most events in `range` (by the events' own time), most first.
    public func topEvents(source: String, range: TimeRange, limit: Int = 10) async throws
        -> [(name: String, count: Int)]
    {
        try await storage.topEvents(source: source, range: range, limit: limit)
    }

    /// Events stored per minute of their arrival in `range` (not of their own time: a backfill of
    /// old events counts when it arrives), oldest first; minutes without any are left out.
    public func arrivalsPerMinute(source: String, range: TimeRange) async throws -> [MinuteCount] {
        try await storage.arrivalsPerMinute(source: source, range: range)
    }
}

extension CollectorQuery {
    /// One page of the NDJSON export (see `GET /v1/query/export`).
    func exportPage(source: String, range: TimeRange, page: PageRequest) async throws -> Page<String> {
        try await storage.exportPage(source: source, range: range, page: page)
    }
}
