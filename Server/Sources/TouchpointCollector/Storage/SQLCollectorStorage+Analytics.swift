import Foundation
import TouchpointCore

extension SQLCollectorStorage {
    /// `FROM … WHERE` for some event names of `source` in `from ..< to` that pass `filters`,
    /// through the name-and-minute index, with each event's merge joined (for
    /// ``PersonKeys/expression``); only the events of `people` when given (a cohort's).
    func eventsNamed(
        _ names: [String], source: String, from: Int64, to: Int64, filters: [PropertyFilter] = [],
        people: Set<Int64>? = nil
    ) -> SQLStatement {
        var statement = SQLStatement(dialect)
        appendEventsNamed(
            names, source: source, from: from, to: to, filters: filters, people: people, to: &statement)
        return statement
    }

    /// Appends ``eventsNamed(_:source:from:to:filters:people:)`` to `statement`.
    ///
    /// Without `mergesJoined` the events' stored `person_key` is all there is of their person (for
    /// ``PersonKeys/person(ofKey:merges:)``): then no filter may be on people and `people` must be nil.
    func appendEventsNamed(
        _ names: [String], source: String, from: Int64, to: Int64, filters: [PropertyFilter], people: Set<Int64>?,
        mergesJoined: Bool = true, to statement: inout SQLStatement
    ) {
        precondition(
            mergesJoined || (people == nil && filters.allSatisfy { $0.scope == .event }),
            "people are found through the merges' join")
        statement.append(" FROM \(dialect.eventsByName)\(mergesJoined ? PersonKeys.join : "") WHERE events.source = ")
        statement.bind(.text(source))
        if names.count == 1 {
            statement.append(" AND event = ")
            statement.bind(.text(names[0]))
        } else {
            statement.append(" AND event IN ")
            statement.bindTuple(names.map { .text($0) })
        }
        appendRange(
            TimeRange(from: Timestamp.date(milliseconds: from), to: Timestamp.date(milliseconds: to)), to: &statement)
        appendFilters(filters, source: source, to: &statement)
        if let people { statement.appendIsIn(PersonKeys.expression, people) }
    }

    /// Appends ` AND (condition)` for each of `filters` (``appendFilter(_:source:to:)``).
    func appendFilters(_ filters: [PropertyFilter], source: String, to statement: inout SQLStatement) {
        for filter in filters {
            statement.append(" AND (")
            appendFilter(filter, source: source, to: &statement)
            statement.append(")")
        }
    }

    /// Appends the condition of `filter` on an `events` row: on its property, or on its person's
    /// newest value of the trait (of the `identify` calls of the person's ids, their merges
    /// followed as ``PersonKeys`` follows them, found through the small index of identify calls).
    func appendFilter(_ filter: PropertyFilter, source: String, to statement: inout SQLStatement) {
        let property = filter.property
        guard filter.scope == .person else {
            dialect.appendCondition(
                filter, text: dialect.analyticsPropertyText(property),
                number: dialect.analyticsPropertyNumber(property),
                to: &statement)
            return
        }
        // "≠" is every person but those "=" finds, those without the trait included.
        var condition = filter
        if filter.op == .notEquals { condition.op = .equals }
        let person = "COALESCE(m.user_key, ABS(t.person_key))"
        statement.append(
            """
            \(PersonKeys.expression) \(filter.op == .notEquals ? "NOT IN" : "IN") (SELECT p FROM (SELECT \(person) AS p, \
            \(dialect.traitText(property, of: "t")) AS v, \(dialect.traitNumber(property, of: "t")) AS n, \
            ROW_NUMBER() OVER (PARTITION BY \(person) ORDER BY t.seq DESC) AS r FROM events t \
            LEFT JOIN person_merges m ON m.anonymous_key = t.person_key AND t.person_key < 0 WHERE t.source = 
            """)
        statement.bind(.text(source))
        statement.append(
            " AND t.type = 'identify' AND \(dialect.carriesTrait(property, of: "t"))) traits WHERE r = 1 AND ")
        dialect.appendCondition(condition, text: "v", number: "n", to: &statement)
        statement.append(")")
    }

    /// ClickHouse's answer to a query of `source` with `filters` and a cohort of `people`, asked
    /// through `body`, when it holds the events and can answer it (``ClickHouseInsights``); nil:
    /// this store answers, as it does a query too long for ClickHouse's URL
    /// (``ClickHouseClient/URITooLong``). Without `persons` the source's merges are not read:
    /// `body` counts events, not people.
    func fromClickHouse<Answer: Sendable>(
        _ source: String, _ filters: [PropertyFilter], _ people: Set<Int64>?, persons: Bool = true,
        _ body: (ClickHouseInsights) async throws -> Answer
    ) async throws -> Answer? {
        guard let clickHouse, ClickHouseInsights.answers(filters: filters, people: people) else { return nil }
        let merges = persons ? try await merges(of: source) : nil
        do {
            return try await body(ClickHouseInsights(client: clickHouse.client, source: source, merges: merges))
        } catch is ClickHouseClient.URITooLong {
            return nil
        }
    }

    /// Each merge of `source`: the merged anonymous id and the user id it was merged into.
    private func merges(of source: String) async throws -> [(anonymous: String, user: String)] {
        var statement = SQLStatement(
            dialect,
            """
            SELECT a.person, u.person FROM person_merges m JOIN person_keys a ON a.person_key = -m.anonymous_key \
            JOIN person_keys u ON u.person_key = m.user_key WHERE a.source = 
            """)
        statement.bind(.text(source))
        return try await backend.query(statement).compactMap { row -> (anonymous: String, user: String)? in
            guard let anonymous = row[0].text, let user = row[1].text else { return nil }
            return (anonymous, user)
        }
    }

    /// Runs a statement that reads many events, on SQLite as a scan (``SQLiteBackend/scan(_:_:)``),
    /// so that the halves of a range read at once go to readers of their own.
    private func scan(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        guard let sqlite = backend as? SQLiteBackend else { return try await backend.query(sql, binds) }
        return try await sqlite.scan(sql, binds)
    }

    /// `select` + a `FROM … WHERE …` statement + `suffix`, with the statement's bound values
    /// (`select` binds nothing, so the placeholders keep their numbers).
    private func select(_ select: String, _ rest: SQLStatement, suffix: String = "") -> (String, [SQLValue]) {
        (select + rest.sql + suffix, rest.binds)
    }

    // MARK: Trends

    /// The trend's events in `from ..< to` (its range when nil).
    private func trendEvents(_ query: TrendQuery, source: String) -> SQLStatement {
        eventsNamed(
            [query.event], source: source, from: query.range.from, to: query.range.to, filters: query.filters,
            people: query.people)
    }

    /// The columns a trend's subquery gives its groups: `idx` (`index`, the interval by default),
    /// `person`, `val` (the breakdown's value, when `breakdown`) and `num` (the math's numeric
    /// property, when it has one).
    private func trendColumns(_ query: TrendQuery, index: String? = nil, breakdown: String? = nil) -> String {
        var columns =
            "SELECT \(index ?? query.range.sqlIndex(query.interval)) AS idx, \(PersonKeys.expression) AS person"
        if let breakdown { columns += ", \(dialect.analyticsPropertyText(breakdown)) AS val" }
        if let property = query.measure.property { columns += ", \(dialect.analyticsPropertyNumber(property)) AS num" }
        return columns
    }

    /// The aggregates of a trend's group: events, distinct people and the math's aggregate of `num`
    /// (NULL for total and users), three columns read back by ``trendCount(_:at:)``.
    private func trendAggregates(_ query: TrendQuery) -> String {
        "COUNT(*), COUNT(DISTINCT person), \(measureAggregate(query.measure))"
    }

    /// The math's aggregate of `num` (NULL for the maths without a property).
    private func measureAggregate(_ measure: TrendMath) -> String {
        switch measure {
        case .total, .users, .active: "NULL"
        case .sum: dialect == .sqlite ? "TOTAL(num)" : "SUM(num)"
        case .average: "AVG(num)"
        case .median: dialect.percentile(0.5, of: "num")
        case .p90: dialect.percentile(0.9, of: "num")
        }
    }

    /// The three columns of ``trendAggregates(_:)`` from column `offset` of `row`.
    private func trendCount(_ row: SQLRow, at offset: Int) -> TrendCount? {
        guard let count = row[offset].int, let users = row[offset + 1].int else { return nil }
        let aggregate: Double?
        switch row[offset + 2] {
        case .double(let value): aggregate = value
        case .int(let value): aggregate = Double(value)
        default: aggregate = nil
        }
        return TrendCount(count: Int(count), users: Int(users), aggregate: aggregate)
    }

    /// The `limit` most frequent values of `property` among the trend's events (absent ones
    /// left out: they always have a series of their own).
    func trendTopValues(source: String, query: TrendQuery, property: String, limit: Int) async throws -> [String] {
        if let answer = try await fromClickHouse(
            source, query.filters, query.people, persons: false,
            {
                try await $0.trendTopValues(query, property: property, limit: limit)
            })
        {
            return answer
        }
        let (sql, binds) = select(
            "SELECT val, COUNT(*) FROM (SELECT \(dialect.analyticsPropertyText(property)) AS val",
            trendEvents(query, source: source),
            suffix: ") q WHERE val IS NOT NULL GROUP BY val ORDER BY 2 DESC, val LIMIT \(limit)")
        return try await backend.query(sql, binds).compactMap { $0[0].text }
    }

    /// Counts and distinct people (and the math's aggregate) per interval of the trend's events.
    func trendTotals(source: String, query: TrendQuery) async throws -> TrendTotals {
        if let answer = try await fromClickHouse(
            source, query.filters, query.people, { try await $0.trendTotals(query) })
        {
            return answer
        }
        let (sql, binds) = select(
            "SELECT idx, \(trendAggregates(query)) FROM (\(trendColumns(query))", trendEvents(query, source: source),
            suffix: ") q GROUP BY idx")
        var totals: TrendTotals = [:]
        for row in try await backend.query(sql, binds) {
            guard let index = row[0].int, let counted = trendCount(row, at: 1) else { continue }
            totals[index] = counted
        }
        return totals
    }

    /// Counts and distinct people (and the math's aggregate) over the trend's whole range: its
    /// people once however many intervals they did it in.
    func trendAggregate(source: String, query: TrendQuery) async throws -> TrendCount {
        if let answer = try await fromClickHouse(
            source, query.filters, query.people, { try await $0.trendAggregate(query) })
        {
            return answer
        }
        let (sql, binds) = select(
            "SELECT \(trendAggregates(query)) FROM (\(trendColumns(query, index: "0"))",
            trendEvents(query, source: source),
            suffix: ") q")
        guard let row = try await backend.query(sql, binds).first, let counted = trendCount(row, at: 0) else {
            throw StorageError(code: .corruptRow, message: "a trend's aggregate returned nothing")
        }
        return counted
    }

    /// Events (and the math's aggregate) per interval of the trend's events, from the
    /// name-and-minute index alone when the math has no property (the people come from the daily
    /// people).
    func trendCounts(source: String, query: TrendQuery) async throws -> TrendTotals {
        if let answer = try await fromClickHouse(
            source, query.filters, query.people, persons: false,
            {
                try await $0.trendTotals(query, people: false)
            })
        {
            return answer
        }
        if query.measure.property == nil, query.filters.isEmpty, query.people == nil,
            query.range.from >= Self.wholeMinuteOffsetsSince
        {
            return try await trendCountsByMinute(source: source, query: query)
        }
        var columns = "SELECT \(query.range.sqlIndex(query.interval)) AS idx"
        if let property = query.measure.property { columns += ", \(dialect.analyticsPropertyNumber(property)) AS num" }
        let (sql, binds) = select(
            "SELECT idx, COUNT(*), 0, \(measureAggregate(query.measure)) FROM (\(columns)",
            trendEvents(query, source: source), suffix: ") q GROUP BY idx")
        var totals: TrendTotals = [:]
        for row in try await backend.query(sql, binds) {
            guard let index = row[0].int, let counted = trendCount(row, at: 1) else { continue }
            totals[index] = counted
        }
        return totals
    }

    /// Since 1973-03-03 every zone's offset from UTC is whole minutes (Liberia's was not until
    /// 1972), so every local day, week and month begins on a whole minute.
    static let wholeMinuteOffsetsSince: Int64 = 100_000_000_000

    /// Events per interval, counted per minute and added up into intervals
    /// (``eventCounts(sources:event:minutes:calendar:interval:)``): the database neither sorts
    /// every event by interval nor joins each to its merge (no person is read). Only
    /// for a range whose intervals begin on whole minutes (``wholeMinuteOffsetsSince``;
    /// `timestamp / 60000` truncates, so no instant before 1970).
    ///
    /// The whole minutes of the range come from the events per minute (``EventMinutes``), a row a
    /// minute, once they count every stored event; the parts of a minute at either end of the
    /// range (and the whole range before then) from the name-and-minute index
    /// (``minuteCountsFromIndex(source:event:from:to:)``).
    private func trendCountsByMinute(source: String, query: TrendQuery) async throws -> TrendTotals {
        let from = query.range.from
        let to = query.range.to
        let first = (from + 59_999) / 60_000
        let end = to / 60_000
        let calendar = query.range.calendar
        var totals: TrendTotals = [:]
        func add(_ index: Int64, _ count: Int64) {
            guard count != 0 else { return }
            totals[index, default: TrendCount(count: 0, users: 0)].count += Int(count)
        }
        var counted: [(minute: Int64, count: Int64)]
        if first < end, try await eventMinutesComplete() {
            for row in try await eventCounts(
                sources: [source], event: query.event, minutes: first..<end, calendar: calendar,
                interval: query.interval)
            {
                add(row.index, row.count)
            }
            counted = []
            if from < first * 60_000 {
                counted += try await minuteCountsFromIndex(
                    source: source, event: query.event, from: from, to: first * 60_000)
            }
            if end * 60_000 < to {
                counted += try await minuteCountsFromIndex(
                    source: source, event: query.event, from: end * 60_000, to: to)
            }
        } else {
            counted = try await minuteCountsFromIndex(source: source, event: query.event, from: from, to: to)
        }
        for (minute, count) in counted { add(calendar.index(of: minute * 60_000, query.interval), count) }
        return totals
    }

    /// The events of `event` in `minutes` (minutes since 1970, whose intervals begin on whole
    /// minutes) of each of `sources` (a source and its value sources, ``ValueRollup``) per
    /// interval of `calendar`, from their rows per minute (``EventMinutes``).
    ///
    /// PostgreSQL adds the minutes up per interval itself (each interval's first minute a
    /// threshold of `width_bucket`), so a row an interval crosses the connection rather than a row
    /// a minute; SQLite, in the process, hands over its minutes.
    func eventCounts(
        sources: [String], event: String, minutes: Range<Int64>, calendar: SourceCalendar,
        interval: AnalyticsInterval
    ) async throws -> [(source: String, index: Int64, count: Int64)] {
        guard !sources.isEmpty else { return [] }
        // One source: its name is not read back with every row.
        let one = sources.count == 1 ? sources.first : nil
        var statement = SQLStatement(dialect, one == nil ? "SELECT source, " : "SELECT NULL, ")
        var indexes: [Int64] = []
        if dialect == .postgres {
            let first = calendar.index(of: minutes.lowerBound * 60_000, interval)
            indexes = Array(first...max(first, calendar.index(of: (minutes.upperBound - 1) * 60_000, interval)))
            let thresholds = indexes.map { SourceCalendar.floorDivide(calendar.start(of: $0, interval), 60_000) }
            statement.append("width_bucket(minute, ")
            statement.bind(.intArray(thresholds))
            statement.append("::bigint[])")
        } else {
            statement.append("minute")
        }
        statement.append(" AS bucket, CAST(SUM(events) AS BIGINT) FROM event_minutes WHERE source IN ")
        statement.bindTuple(sources.sorted().map { .text($0) })
        statement.append(" AND event = ")
        statement.bind(.text(event))
        statement.append(" AND minute >= ")
        statement.bind(.int(minutes.lowerBound))
        statement.append(" AND minute < ")
        statement.bind(.int(minutes.upperBound))
        statement.append(one == nil ? " GROUP BY source, bucket" : " GROUP BY bucket")
        let dialect = self.dialect
        return try await backend.query(statement).compactMap { row in
            guard let source = one ?? row[0].text, let bucket = row[1].int, let count = row[2].int else { return nil }
            guard dialect == .postgres else {
                return (source, calendar.index(of: bucket * 60_000, interval), count)
            }
            // Bucket k holds the minutes from the k-th threshold up to the next.
            guard bucket >= 1, bucket <= indexes.count else { return nil }
            return (source, indexes[Int(bucket) - 1], count)
        }
    }

    /// Events of `event` per minute of the name-and-minute index in `from ..< to` (ms).
    ///
    /// SQLite answers a statement on one core: there the two halves of the range, split on a whole
    /// minute, are counted at once on two reader connections (minutes add up, so any split is
    /// exact).
    private func minuteCountsFromIndex(source: String, event: String, from: Int64, to: Int64) async throws
        -> [(minute: Int64, count: Int64)]
    {
        let middle = (from / 2 + to / 2) / 60_000 * 60_000
        let parts =
            dialect.queriesRunOnOneCore && middle > from && middle < to ? [(from, middle), (middle, to)] : [(from, to)]
        let backend = self.backend
        let dialect = self.dialect
        let counted = try await withThrowingTaskGroup(of: [SQLRow].self) { group in
            for (start, end) in parts {
                var statement = SQLStatement(
                    dialect,
                    "SELECT \(Self.minuteExpression) AS m, COUNT(*) FROM \(dialect.eventsByName) WHERE events.source = "
                )
                statement.bind(.text(source))
                statement.append(" AND event = ")
                statement.bind(.text(event))
                appendRange(
                    TimeRange(from: Timestamp.date(milliseconds: start), to: Timestamp.date(milliseconds: end)),
                    to: &statement)
                statement.append(" GROUP BY m")
                let read = statement
                group.addTask { try await backend.query(read) }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        return counted.compactMap { row in
            guard let minute = row[0].int, let count = row[1].int else { return nil }
            return (minute, count)
        }
    }

    /// Counts and distinct people per interval and value of `property` (nil: absent), and per
    /// interval over all values, in one pass; its rows are nil when there are more than `limit`
    /// (interval, value) pairs (a property with very many values, which
    /// ``trendBreakdown(source:query:property:top:)`` handles instead). Without `people` the
    /// totals' people are left at 0 (the caller reads them from the daily people), so the totals
    /// are counted from the name-and-minute index alone (``trendCounts(source:query:)``) and only
    /// the pairs read every event.
    ///
    /// Every event's row is read (for the property). With the totals' people, PostgreSQL counts the
    /// pairs and the intervals in one statement (grouping sets), on parallel workers of its own.
    /// SQLite answers a query on one core and has no grouping sets: there the totals are counted
    /// while the two halves of the range, split where an interval starts so that no group
    /// straddles them, are grouped at once, on the reader connections.
    func trendByValue(source: String, query: TrendQuery, property: String, limit: Int, people: Bool) async throws
        -> TrendPass
    {
        if let answer = try await fromClickHouse(
            source, query.filters, query.people,
            { insights in
                async let totals = insights.trendTotals(query, people: people)
                let rows = try await insights.trendByValue(query, property: property, limit: limit)
                return TrendPass(rows: rows, totals: try await totals)
            })
        {
            return answer
        }
        @Sendable func totalsCounted() async throws -> TrendTotals {
            people
                ? try await trendTotals(source: source, query: query)
                : try await trendCounts(source: source, query: query)
        }
        guard dialect.queriesRunOnOneCore else {
            guard !people else {
                return try await trendByValueWithTotals(source: source, query: query, property: property, limit: limit)
            }
            async let totals = totalsCounted()
            let rows = try await trendByValueOnce(source: source, query: query, property: property, limit: limit)
            return TrendPass(rows: rows, totals: try await totals)
        }
        async let totals = totalsCounted()
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

    /// PostgreSQL's ``trendByValue(source:query:property:limit:people:)`` with the totals' people: `GROUPING(val)` tells an
    /// interval's total from its pairs. At most `limit` pairs and a total per interval fit in
    /// `limit` + the intervals' count rows, so one row more, whatever their order, means more
    /// pairs than `limit` (and the totals are then left to ``trendTotals(source:query:)``).
    private func trendByValueWithTotals(source: String, query: TrendQuery, property: String, limit: Int)
        async throws -> TrendPass
    {
        let interval = query.interval
        let intervals = query.range.intervals(interval).count
        let (sql, binds) = select(
            "SELECT idx, val, GROUPING(val), \(trendAggregates(query)) FROM (\(trendColumns(query, breakdown: property))",
            trendEvents(query, source: source),
            suffix: ") q GROUP BY GROUPING SETS ((idx, val), (idx)) LIMIT \(limit + intervals + 1)")
        var rows: [TrendRow] = []
        var totals: TrendTotals = [:]
        for row in try await backend.query(sql, binds) {
            guard let index = row[0].int, let isTotal = row[2].int, let counted = trendCount(row, at: 3) else {
                continue
            }
            if isTotal == 1 {
                totals[index] = counted
            } else {
                rows.append(TrendRow(index: index, value: row[1].text, isOther: false, counted))
            }
        }
        guard rows.count <= limit else { return TrendPass(rows: nil, totals: nil) }
        return TrendPass(rows: rows, totals: totals)
    }

    private func trendByValueOnce(source: String, query: TrendQuery, property: String, limit: Int) async throws
        -> [TrendRow]?
    {
        if let sqlite = backend as? SQLiteBackend, query.measure.property == nil {
            return try await trendGroupsCounted(
                sqlite, source: source, query: query, property: property, limit: limit, group: { ($0, false) })
        }
        let (sql, binds) = select(
            "SELECT idx, val, \(trendAggregates(query)) FROM (\(trendColumns(query, breakdown: property))",
            trendEvents(query, source: source), suffix: ") q GROUP BY idx, val LIMIT \(limit + 1)")
        let rows = try await scan(sql, binds)
        guard rows.count <= limit else { return nil }
        return rows.compactMap { row in
            guard let index = row[0].int, let counted = trendCount(row, at: 2) else { return nil }
            return TrendRow(index: index, value: row[1].text, isOther: false, counted)
        }
    }

    /// Counts and distinct people per interval and breakdown value: each of the `top` values on
    /// its own, absent values together, every other value as "other".
    func trendBreakdown(source: String, query: TrendQuery, property: String, top: [String]) async throws
        -> [TrendRow]
    {
        if let answer = try await fromClickHouse(
            source, query.filters, query.people,
            {
                try await $0.trendBreakdown(query, property: property, top: top)
            })
        {
            return answer
        }
        if let sqlite = backend as? SQLiteBackend, query.measure.property == nil {
            let kept = Set(top.map({ ExactText($0) }))
            @Sendable func group(_ value: String?) -> (value: String?, isOther: Bool) {
                guard let value else { return (nil, false) }
                return kept.contains(ExactText(value)) ? (value, false) : (nil, true)
            }
            guard dialect.queriesRunOnOneCore, let (early, late) = Self.halves(of: query) else {
                return try await trendGroupsCounted(
                    sqlite, source: source, query: query, property: property, limit: nil, group: group) ?? []
            }
            async let first = trendGroupsCounted(
                sqlite, source: source, query: early, property: property, limit: nil, group: group)
            let second = try await trendGroupsCounted(
                sqlite, source: source, query: late, property: property, limit: nil, group: group)
            return (try await first ?? []) + (second ?? [])
        }
        // kind 0: a top value; 1: absent; 2: other.
        var statement = SQLStatement(
            dialect,
            "SELECT idx, CASE WHEN tops.v IS NOT NULL THEN 0 WHEN q.val IS NULL THEN 1 ELSE 2 END AS kind, CASE WHEN tops.v IS NOT NULL THEN q.val END AS value, \(trendAggregates(query)) FROM (\(trendColumns(query, breakdown: property))"
        )
        let events = trendEvents(query, source: source)
        statement.append(events.sql)
        // The top values are bound (they are what clients sent), in a list joined after the
        // events' subquery, so the placeholders appear in the order they are bound.
        var binds = events.binds
        statement.append(") q LEFT JOIN (")
        if top.isEmpty {
            statement.append("SELECT NULL AS v WHERE 1 = 0")
        }
        for (offset, value) in top.enumerated() {
            statement.append(offset == 0 ? "SELECT " : " UNION ALL SELECT ")
            binds.append(.text(value))
            statement.append(dialect.placeholder(binds.count))
            statement.append(" AS v")
        }
        statement.append(") tops ON q.val = tops.v GROUP BY 1, 2, 3")
        return try await backend.query(statement.sql, binds).compactMap { row in
            guard let index = row[0].int, let kind = row[1].int, let counted = trendCount(row, at: 3) else {
                return nil
            }
            return TrendRow(index: index, value: row[2].text, isOther: kind == 2, counted)
        }
    }

    /// SQLite's counts and distinct people of a trend's events grouped by interval and `group` of
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
        _ sqlite: SQLiteBackend, source: String, query: TrendQuery, property: String, limit: Int?,
        group: @escaping @Sendable (String?) -> (value: String?, isOther: Bool)
    ) async throws -> [TrendRow]? {
        let joined = query.people != nil || query.filters.contains { $0.scope != .event }
        var statement = SQLStatement(
            dialect,
            "SELECT \(query.range.sqlIndex(query.interval)), \(joined ? PersonKeys.expression : "events.person_key"), \(dialect.analyticsPropertyText(property))"
        )
        appendEventsNamed(
            [query.event], source: source, from: query.range.from, to: query.range.to, filters: query.filters,
            people: query.people, mergesJoined: joined, to: &statement)
        let (sql, binds) = (statement.sql, statement.binds)
        struct Key: Hashable {
            var index: Int64
            var value: ExactText?
            var isOther: Bool
        }
        return try await sqlite.read { connection in
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("COMMIT") }
            let merges = joined ? [:] : try Self.personMerges(connection)
            var groups: [Key: (count: Int, people: Set<Int64>)] = [:]
            var tooMany = false
            try connection.queryEach(sql, binds) { row in
                guard !tooMany, !row.isNull(0) else { return }
                let grouped = group(row.text(2))
                let key = Key(
                    index: row.integer(0), value: grouped.value.map({ ExactText($0) }), isOther: grouped.isOther)
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

    /// Every event of the funnel's steps from its start to `window` after its end that meets
    /// the funnel's filters, with the person, the steps it is (its name and filters considered)
    /// and the breakdown property's value. Read through the name-and-minute index: events that
    /// are no step are not read.
    func funnelRows(source: String, query: FunnelQuery) async throws -> [FunnelRow] {
        if let answer = try await fromClickHouse(
            source, query.filters + query.steps.flatMap(\.filters), query.people, { try await $0.funnelRows(query) })
        {
            return answer
        }
        // A statement reads on one core (SQLite always; PostgreSQL 15 plans this scan without
        // parallel workers): the two halves of the range at once, on two connections. The rows
        // carry their order of arrival, so the funnel orders a person's events at one time the
        // same way whichever half, statement or worker read them.
        let from = query.range.from
        let to = query.range.to + query.window
        let middle = from / 2 + to / 2
        guard middle > from else {
            return try await funnelRows(source: source, query: query, from: from, to: to)
        }
        async let early = funnelRows(source: source, query: query, from: from, to: middle)
        let late = try await funnelRows(source: source, query: query, from: middle, to: to)
        return try await early + late
    }

    /// ``funnelRows(source:query:)`` of the events in `from ..< to`.
    private func funnelRows(source: String, query: FunnelQuery, from: Int64, to: Int64) async throws -> [FunnelRow] {
        let names = query.eventNames
        // SQLite, without a cohort or a filter on people: each event's stored key, its merge
        // looked up here (the merges' table read once) rather than in SQLite for every event.
        let sqlite =
            query.people == nil && (query.filters + query.steps.flatMap(\.filters)).allSatisfy { $0.scope == .event }
            ? backend as? SQLiteBackend : nil
        // PostgreSQL packs the rows into one value (``PackedFunnelRows``): a funnel's million
        // step events as rows cost the collector seconds taking them off the connection.
        let packed = dialect == .postgres
        let breakdown = query.breakdown.map(dialect.analyticsPropertyText)
        var statement = SQLStatement(
            dialect,
            "SELECT \(packed ? PackedFunnelRows.aggregate(values: breakdown != nil) : "person, timestamp, steps, value, seq") FROM (SELECT \(sqlite == nil ? PersonKeys.expression : "events.person_key") AS person, timestamp, events.seq AS seq, "
        )
        // Bit i when the event is step i (SQLite and PostgreSQL both read `|` on integers).
        for (index, step) in query.steps.enumerated() {
            statement.append(index == 0 ? "(" : " | ")
            statement.append("CASE WHEN event = ")
            statement.bind(.text(step.event))
            appendFilters(step.filters, source: source, to: &statement)
            statement.append(" THEN \(1 << index) ELSE 0 END")
        }
        statement.append(") AS steps, ")
        if let breakdown {
            // The breakdown's value only of the first step's events: the funnel reads no other's,
            // and working it out of the payload is most of a step event's cost.
            statement.append("CASE WHEN event = ")
            statement.bind(.text(query.steps[0].event))
            appendFilters(query.steps[0].filters, source: source, to: &statement)
            statement.append(" THEN \(packed ? "textsend(\(breakdown))" : breakdown) END")
        } else {
            statement.append("NULL")
        }
        statement.append(" AS value")
        appendEventsNamed(
            names, source: source, from: from, to: to, filters: query.filters, people: query.people,
            mergesJoined: sqlite == nil, to: &statement)
        statement.append(") q WHERE steps <> 0")
        if packed {
            let rows = try await backend.query(statement.sql, statement.binds, bytesAt: [0])
            // No step event: `string_agg` of no rows is NULL.
            guard let packed = rows.first?.first, !packed.isNull else { return [] }
            guard let bytes = packed.bytes else {
                throw StorageError(code: .corruptRow, message: "a funnel's packed step events did not come as bytes")
            }
            return try PackedFunnelRows.rows(bytes, values: breakdown != nil)
        }
        if let sqlite {
            // Row by row into funnel rows: no list of generic rows for the million step events of
            // a month. The merges and the events are read in one snapshot.
            let (sql, binds) = (statement.sql, statement.binds)
            return try await sqlite.read { connection in
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
        return try await scan(statement.sql, statement.binds).compactMap { row in
            guard let person = row[0].int, let timestamp = row[1].int, let steps = row[2].int, let sequence = row[4].int
            else { return nil }
            return FunnelRow(
                person: person, timestamp: timestamp, steps: Int(steps), value: row[3].text, sequence: sequence)
        }
    }
}

extension SQLCollectorStorage {
    /// Every merged anonymous key (negative, as events store it) and its user's key, for
    /// ``PersonKeys/person(ofKey:merges:)``.
    static func personMerges(_ connection: SQLiteConnection) throws -> [Int64: Int64] {
        var merges: [Int64: Int64] = [:]
        try connection.queryEach("SELECT anonymous_key, user_key FROM person_merges", []) { row in
            merges[row.integer(0)] = row.integer(1)
        }
        return merges
    }

    /// One page of the export: each event as a line of NDJSON holding the message as it was
    /// received (its stored payload with the members its columns hold put back, not parsed again), its
    /// corrected time and when it arrived.
    func exportPage(source: String, range: TimeRange, page: PageRequest) async throws -> Page<String> {
        let statement = try eventsStatement(source: source, filter: EventFilter(range: range), page: page)
        let rows = try await backend.query(statement)
        let lines = try rows.map { row -> (Int64, Int64, String) in
            let event = try StoredEventRow(row)
            let line =
                "{\"timestamp\":\"\(Timestamp.format(Timestamp.date(milliseconds: event.timestamp)))\",\"receivedAt\":\"\(Timestamp.format(Timestamp.date(milliseconds: event.receivedAt)))\",\"message\":\(try event.message())}\n"
            return (event.seq, event.timestamp, line)
        }
        let paged = Self.page(lines, limit: page.limit) { Self.keysetCursor(timestamp: $0.1, sequence: $0.0) }
        return Page(items: paged.items.map(\.2), nextCursor: paged.nextCursor)
    }
}
