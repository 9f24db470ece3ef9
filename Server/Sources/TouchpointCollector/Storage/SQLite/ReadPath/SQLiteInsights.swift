import Foundation
import TouchpointCore

/// SQLite's ``InsightEngine``: the shared SQL (``SQLInsightEngine``), and SQLite's own ways where
/// they are faster.
///
/// SQLite answers a statement on one core, so the scans of an insight that read many events — a
/// trend's minute counts and groups, a funnel's steps, a path's events — read the two halves of
/// their range at once on two reader connections (``SQLiteBackend/scan(_:_:)``) and add them up
/// or join them in time order. Its funnels, paths and breakdowns without a cohort or a filter on
/// people read each event's stored key and resolve its merge in memory (`person_merges` read once,
/// in the same snapshot: ``personMerges(_:)``) instead of SQLite looking the merge up for every
/// event, and a breakdown's groups are counted in a hash (``trendGroupsCounted``) rather than by
/// SQLite's sort for `COUNT(DISTINCT)`.
struct SQLiteInsights: SQLInsightEngine {
    let backend: SQLiteBackend
    let eventMinutes: EventMinutesReader

    var database: any SQLBackend { backend }
    var engineName: String { "sqlite" }

    // MARK: Trends

    /// The two halves of the range, split on a whole minute, counted at once on two reader
    /// connections (minutes add up, so any split is exact).
    func minuteCountsFromIndex(source: String, event: String, from: Int64, to: Int64) async throws
        -> [(minute: Int64, count: Int64)]
    {
        let middle = (from / 2 + to / 2) / 60_000 * 60_000
        let parts = middle > from && middle < to ? [(from, middle), (middle, to)] : [(from, to)]
        let backend = self.backend
        let counted = try await withThrowingTaskGroup(of: [SQLRow].self) { group in
            for (start, end) in parts {
                let read = minuteCountsStatement(source: source, event: event, from: start, to: end)
                group.addTask { try await backend.query(read) }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        return Self.minuteCounts(counted)
    }

    /// The totals are counted while the two halves of the range, split where an interval starts so
    /// that no group straddles them, are grouped at once, on the reader connections (SQLite has no
    /// grouping sets).
    func trendByValue(source: String, query: TrendQuery, property: String, limit: Int, people: Bool) async throws
        -> TrendPass
    {
        async let totals =
            people
            ? trendTotals(source: source, query: query) : trendCounts(source: source, query: query)
        guard let (early, late) = Self.halves(of: query) else {
            let rows = try await trendByValueOnce(source: source, query: query, property: property, limit: limit)
            return TrendPass(rows: rows, totals: try await totals)
        }
        async let first = trendByValueOnce(source: source, query: early, property: property, limit: limit)
        let second = try await trendByValueOnce(source: source, query: late, property: property, limit: limit)
        guard let first = try await first, let second, first.count + second.count <= limit else {
            return TrendPass(rows: nil, totals: try await totals)
        }
        return TrendPass(rows: first + second, totals: try await totals)
    }

    /// `query` over the two halves of its range, split where the interval halfway through it
    /// starts; nil when the range is one interval.
    static func halves(of query: TrendQuery) -> (early: TrendQuery, late: TrendQuery)? {
        let range = query.range
        let intervals = range.intervals(query.interval)
        guard intervals.upperBound > intervals.lowerBound else { return nil }
        let middle = range.calendar.start(of: (intervals.lowerBound + intervals.upperBound + 1) / 2, query.interval)
        var early = query
        var late = query
        early.range.to = middle
        late.range.from = middle
        return (early, late)
    }

    private func trendByValueOnce(source: String, query: TrendQuery, property: String, limit: Int) async throws
        -> [TrendRow]?
    {
        if query.measure.property == nil {
            return try await trendGroupsCounted(
                source: source, query: query, property: property, limit: limit, group: { ($0, false) })
        }
        let (sql, binds) = trendGroupsStatement(source: source, query: query, property: property, limit: limit)
        return trendGroups(try await backend.scan(sql, binds), limit: limit)
    }

    func trendBreakdown(source: String, query: TrendQuery, property: String, top: [String]) async throws
        -> [TrendRow]
    {
        guard query.measure.property == nil else {
            return try await trendBreakdownInSQL(source: source, query: query, property: property, top: top)
        }
        let kept = Set(top.map { ExactText($0) })
        @Sendable func group(_ value: String?) -> (value: String?, isOther: Bool) {
            guard let value else { return (nil, false) }
            return kept.contains(ExactText(value)) ? (value, false) : (nil, true)
        }
        guard let (early, late) = Self.halves(of: query) else {
            return try await trendGroupsCounted(
                source: source, query: query, property: property, limit: nil, group: group) ?? []
        }
        async let first = trendGroupsCounted(source: source, query: early, property: property, limit: nil, group: group)
        let second = try await trendGroupsCounted(
            source: source, query: late, property: property, limit: nil, group: group)
        return (try await first ?? []) + (second ?? [])
    }

    /// The counts and distinct people of a trend's events grouped by interval and `group` of
    /// `property`'s value (the value a group shows, and whether it is "other"), its events read row
    /// by row and counted here; nil when there are more than `limit` groups. For the maths
    /// without a property (whose aggregate is NULL).
    ///
    /// In one statement, for a month of `app_opened` at 10 M in the `sqlite3` shell, SQLite's
    /// grouping with `COUNT(DISTINCT …)` (a sort of every event) took 0.8 s and its merge lookup per
    /// event 0.45 s of 2.6 s. Here the groups are counted in a hash and, without a cohort or a
    /// filter on people, each event's merge is looked up in memory (as a funnel's are); reading
    /// the events' rows is what is left. Values are grouped by their bytes, as SQL groups them.
    private func trendGroupsCounted(
        source: String, query: TrendQuery, property: String, limit: Int?,
        group: @escaping @Sendable (String?) -> (value: String?, isOther: Bool)
    ) async throws -> [TrendRow]? {
        let joined = query.people != nil || query.filters.contains { $0.scope != .event }
        var statement = SQLStatement(
            dialect,
            "SELECT \(query.range.sqlIndex(query.interval)), \(joined ? PersonKeys.expression : "events.person_key"), \(dialect.analyticsPropertyText(property))"
        )
        statement.appendEventsNamed(
            [query.event], source: source, from: query.range.from, to: query.range.to, filters: query.filters,
            people: query.people, mergesJoined: joined)
        let (sql, binds) = (statement.sql, statement.binds)
        struct Key: Hashable {
            var index: Int64
            var value: ExactText?
            var isOther: Bool
        }
        return try await backend.read { connection in
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("COMMIT") }
            let merges = joined ? [:] : try Self.personMerges(connection)
            var groups: [Key: (count: Int, people: Set<Int64>)] = [:]
            var tooMany = false
            try connection.queryEach(sql, binds) { row in
                guard !tooMany, !row.isNull(0) else { return }
                let grouped = group(row.text(2))
                let key = Key(
                    index: row.integer(0), value: grouped.value.map { ExactText($0) }, isOther: grouped.isOther)
                // An event without a person counts as an event, not as a person (as `COUNT(*)` and
                // `COUNT(DISTINCT person)` count it).
                let person =
                    row.isNull(1)
                    ? nil : joined ? row.integer(1) : PersonKeys.person(ofKey: row.integer(1), merges: merges)
                if let limit, groups.count >= limit, groups[key] == nil {
                    tooMany = true
                    return
                }
                func add(_ counted: inout (count: Int, people: Set<Int64>)) {
                    counted.count += 1
                    if let person { counted.people.insert(person) }
                }
                add(&groups[key, default: (0, [])])
            }
            guard !tooMany else { return nil }
            return groups.map { key, counted in
                TrendRow(
                    index: key.index, value: key.value?.text, isOther: key.isOther, count: counted.count,
                    users: counted.people.count, aggregate: nil)
            }
            .sorted { ($0.index, $0.isOther ? 1 : 0, $0.value ?? "") < ($1.index, $1.isOther ? 1 : 0, $1.value ?? "") }
        }
    }

    // MARK: Funnels

    /// Without a cohort or a filter on people, each event's stored key, its merge looked up here
    /// (the merges' table read once, in the events' snapshot) rather than in SQLite for every
    /// event; the rows taken one by one into funnel rows, no list of generic rows for the million
    /// step events of a month.
    func funnelRows(source: String, query: FunnelQuery) async throws -> [FunnelRow] {
        let storedKeys =
            query.people == nil && (query.filters + query.steps.flatMap(\.filters)).allSatisfy { $0.scope == .event }
        return try await funnelRowsByHalves(query: query) { from, to in
            let statement = funnelStatement(
                source: source, query: query, from: from, to: to, columns: "person, timestamp, steps, value, seq",
                storedKeys: storedKeys)
            guard storedKeys else { return Self.funnelRows(try await backend.scan(statement.sql, statement.binds)) }
            let (sql, binds) = (statement.sql, statement.binds)
            return try await backend.read { connection in
                try connection.execute("BEGIN")
                defer { _ = try? connection.execute("COMMIT") }
                let merges = try Self.personMerges(connection)
                var rows: [FunnelRow] = []
                try connection.queryEach(sql, binds) { row in
                    guard !row.isNull(0), !row.isNull(1) else { return }
                    rows.append(
                        FunnelRow(
                            person: PersonKeys.person(ofKey: row.integer(0), merges: merges),
                            timestamp: row.integer(1), steps: Int(row.integer(2)), value: row.text(3),
                            sequence: row.integer(4)))
                }
                return rows
            }
        }
    }

    /// Every merged anonymous key (negative, as events store it) and its user's key, for
    /// ``PersonKeys/person(ofKey:merges:)``.
    static func personMerges(_ connection: SQLiteConnection) throws -> [Int64: Int64] {
        var merges: [Int64: Int64] = [:]
        try connection.queryEach("SELECT anonymous_key, user_key FROM person_merges", []) { row in
            merges[row.integer(0)] = row.integer(1)
        }
        return merges
    }
}
