import Foundation
import TouchpointCore

/// The insights SQLite and PostgreSQL answer with the same SQL, printed from the typed selection
/// with bound values (``SQLStatement``; the words where the two differ come from ``SQLDialect``).
///
/// Each database's engine (``SQLiteInsights``, ``PostgresInsights``) conforms and answers in its
/// own folder what it answers its own way; this file names neither. Every read of events goes
/// through the name-and-minute index (`events_name_minute`), each event's merge joined for
/// ``PersonKeys/expression`` unless an engine resolves merges itself.
protocol SQLInsightEngine: InsightEngine {
    /// The database the engine reads.
    var database: any SQLBackend { get }
    /// The events per minute (``EventMinutes``), for the trends' counts.
    var eventMinutes: EventMinutesReader { get }
    /// Events of `event` per minute of the name-and-minute index in `from ..< to` (ms).
    func minuteCountsFromIndex(source: String, event: String, from: Int64, to: Int64) async throws
        -> [(minute: Int64, count: Int64)]
}

extension SQLInsightEngine {
    var dialect: SQLDialect { database.dialect }

    /// `FROM … WHERE` for some event names of `source` in `from ..< to` that pass `filters`
    /// (``SQLStatement/appendEventsNamed(_:source:from:to:filters:people:mergesJoined:)``).
    func eventsNamed(
        _ names: [String], source: String, from: Int64, to: Int64, filters: [PropertyFilter] = [],
        people: Set<Int64>? = nil
    ) -> SQLStatement {
        var statement = SQLStatement(dialect)
        statement.appendEventsNamed(names, source: source, from: from, to: to, filters: filters, people: people)
        return statement
    }

    /// `select` + a `FROM … WHERE …` statement + `suffix`, with the statement's bound values
    /// (`select` binds nothing, so the placeholders keep their numbers).
    func select(_ select: String, _ rest: SQLStatement, suffix: String = "") -> (String, [SQLValue]) {
        (select + rest.sql + suffix, rest.binds)
    }

    // MARK: Trends

    /// The trend's events in its range.
    func trendEvents(_ query: TrendQuery, source: String) -> SQLStatement {
        eventsNamed(
            [query.event], source: source, from: query.range.from, to: query.range.to, filters: query.filters,
            people: query.people)
    }

    /// The columns a trend's subquery gives its groups: `idx` (`index`, the interval by default),
    /// `person`, `val` (the breakdown's value, when `breakdown`) and `num` (the math's numeric
    /// property, when it has one).
    func trendColumns(_ query: TrendQuery, index: String? = nil, breakdown: String? = nil) -> String {
        var columns =
            "SELECT \(index ?? query.range.sqlIndex(query.interval)) AS idx, \(PersonKeys.expression) AS person"
        if let breakdown { columns += ", \(dialect.analyticsPropertyText(breakdown)) AS val" }
        if let property = query.measure.property { columns += ", \(dialect.analyticsPropertyNumber(property)) AS num" }
        return columns
    }

    /// The aggregates of a trend's group: events, distinct people and the math's aggregate of `num`
    /// (NULL for total and users), three columns read back by ``trendCount(_:at:)``.
    func trendAggregates(_ query: TrendQuery) -> String {
        "COUNT(*), COUNT(DISTINCT person), \(measureAggregate(query.measure))"
    }

    /// The math's aggregate of `num` (NULL for the maths without a property).
    func measureAggregate(_ measure: TrendMath) -> String {
        switch measure {
        case .total, .users, .active: "NULL"
        case .sum: dialect.sum(of: "num")
        case .average: "AVG(num)"
        case .median: dialect.percentile(0.5, of: "num")
        case .p90: dialect.percentile(0.9, of: "num")
        }
    }

    /// The three columns of ``trendAggregates(_:)`` from column `offset` of `row`.
    func trendCount(_ row: SQLRow, at offset: Int) -> TrendCount? {
        guard let count = row[offset].int, let users = row[offset + 1].int else { return nil }
        let aggregate: Double?
        switch row[offset + 2] {
        case .double(let value): aggregate = value
        case .int(let value): aggregate = Double(value)
        default: aggregate = nil
        }
        return TrendCount(count: Int(count), users: Int(users), aggregate: aggregate)
    }

    func trendTopValues(source: String, query: TrendQuery, property: String, limit: Int) async throws -> [String] {
        let (sql, binds) = select(
            "SELECT val, COUNT(*) FROM (SELECT \(dialect.analyticsPropertyText(property)) AS val",
            trendEvents(query, source: source),
            suffix: ") q WHERE val IS NOT NULL GROUP BY val ORDER BY 2 DESC, val LIMIT \(limit)")
        return try await database.query(sql, binds).compactMap { $0[0].text }
    }

    func trendTotals(source: String, query: TrendQuery) async throws -> TrendTotals {
        let (sql, binds) = select(
            "SELECT idx, \(trendAggregates(query)) FROM (\(trendColumns(query))", trendEvents(query, source: source),
            suffix: ") q GROUP BY idx")
        var totals: TrendTotals = [:]
        for row in try await database.query(sql, binds) {
            guard let index = row[0].int, let counted = trendCount(row, at: 1) else { continue }
            totals[index] = counted
        }
        return totals
    }

    func trendAggregate(source: String, query: TrendQuery) async throws -> TrendCount {
        let (sql, binds) = select(
            "SELECT \(trendAggregates(query)) FROM (\(trendColumns(query, index: "0"))",
            trendEvents(query, source: source),
            suffix: ") q")
        guard let row = try await database.query(sql, binds).first, let counted = trendCount(row, at: 0) else {
            throw StorageError(code: .corruptRow, message: "a trend's aggregate returned nothing")
        }
        return counted
    }

    /// Events (and the math's aggregate) per interval of the trend's events, from the
    /// name-and-minute index alone when the math has no property (the people come from the daily
    /// people).
    func trendCounts(source: String, query: TrendQuery) async throws -> TrendTotals {
        if query.measure.property == nil, query.filters.isEmpty, query.people == nil,
            query.range.from >= SourceCalendar.wholeMinuteOffsetsSince
        {
            return try await trendCountsByMinute(source: source, query: query)
        }
        var columns = "SELECT \(query.range.sqlIndex(query.interval)) AS idx"
        if let property = query.measure.property { columns += ", \(dialect.analyticsPropertyNumber(property)) AS num" }
        let (sql, binds) = select(
            "SELECT idx, COUNT(*), 0, \(measureAggregate(query.measure)) FROM (\(columns)",
            trendEvents(query, source: source), suffix: ") q GROUP BY idx")
        var totals: TrendTotals = [:]
        for row in try await database.query(sql, binds) {
            guard let index = row[0].int, let counted = trendCount(row, at: 1) else { continue }
            totals[index] = counted
        }
        return totals
    }

    /// Events per interval, counted per minute and added up into intervals
    /// (``EventMinutesReader/counts(sources:event:minutes:calendar:interval:)``): the database
    /// neither sorts every event by interval nor joins each to its merge (no person is read). Only
    /// for a range whose intervals begin on whole minutes (``SourceCalendar/wholeMinuteOffsetsSince``;
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
        if first < end, try await eventMinutes.complete() {
            for row in try await eventMinutes.counts(
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

    /// The statement counting the events of `event` per minute of the name-and-minute index in
    /// `from ..< to` (ms): `minute`, `count`.
    func minuteCountsStatement(source: String, event: String, from: Int64, to: Int64) -> SQLStatement {
        var statement = SQLStatement(
            dialect,
            "SELECT \(SQLStatement.minuteExpression) AS m, COUNT(*) FROM \(dialect.eventsByName) WHERE events.source = "
        )
        statement.bind(.text(source))
        statement.append(" AND event = ")
        statement.bind(.text(event))
        statement.appendRange(
            TimeRange(from: Timestamp.date(milliseconds: from), to: Timestamp.date(milliseconds: to)))
        statement.append(" GROUP BY m")
        return statement
    }

    /// The `(minute, count)` pairs of rows read by ``minuteCountsStatement(source:event:from:to:)``.
    static func minuteCounts(_ rows: [SQLRow]) -> [(minute: Int64, count: Int64)] {
        rows.compactMap { row in
            guard let minute = row[0].int, let count = row[1].int else { return nil }
            return (minute, count)
        }
    }

    /// The statement of a breakdown's groups in one pass: `idx`, `val` and ``trendAggregates(_:)``
    /// per (interval, value), at most `limit` + 1 rows (read by ``trendGroups(_:limit:)``).
    func trendGroupsStatement(source: String, query: TrendQuery, property: String, limit: Int) -> (String, [SQLValue]) {
        select(
            "SELECT idx, val, \(trendAggregates(query)) FROM (\(trendColumns(query, breakdown: property))",
            trendEvents(query, source: source), suffix: ") q GROUP BY idx, val LIMIT \(limit + 1)")
    }

    /// The rows of ``trendGroupsStatement(source:query:property:limit:)``; nil when there are more
    /// than `limit`.
    func trendGroups(_ rows: [SQLRow], limit: Int) -> [TrendRow]? {
        guard rows.count <= limit else { return nil }
        return rows.compactMap { row in
            guard let index = row[0].int, let counted = trendCount(row, at: 2) else { return nil }
            return TrendRow(index: index, value: row[1].text, isOther: false, counted)
        }
    }

    /// Events and distinct people per interval and breakdown value in SQL: each of the `top`
    /// values on its own, absent values together, every other value as "other" (the top values
    /// are bound, in a list joined after the events' subquery).
    func trendBreakdownInSQL(source: String, query: TrendQuery, property: String, top: [String]) async throws
        -> [TrendRow]
    {
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
        return try await database.query(statement.sql, binds).compactMap { row in
            guard let index = row[0].int, let kind = row[1].int, let counted = trendCount(row, at: 3) else {
                return nil
            }
            return TrendRow(index: index, value: row[2].text, isOther: kind == 2, counted)
        }
    }

    // MARK: Funnels

    /// The statement of a funnel's step events in `from ..< to`: `person` (each event's stored
    /// key when `storedKeys`, else ``PersonKeys/expression``), `timestamp`, `seq`, `steps` (bit i
    /// when the event is step i, its name and filters considered) and `value` (the breakdown's
    /// value, on first-step events only; `valueText` wraps it, as PostgreSQL's packing does), as
    /// the subquery `q` of events that are some step. `columns` is what is selected from it.
    func funnelStatement(
        source: String, query: FunnelQuery, from: Int64, to: Int64, columns: String, storedKeys: Bool,
        valueText: (String) -> String = { $0 }
    ) -> SQLStatement {
        let breakdown = query.breakdown.map(dialect.analyticsPropertyText)
        var statement = SQLStatement(
            dialect,
            "SELECT \(columns) FROM (SELECT \(storedKeys ? "events.person_key" : PersonKeys.expression) AS person, timestamp, events.seq AS seq, "
        )
        // Bit i when the event is step i (SQLite and PostgreSQL both read `|` on integers).
        for (index, step) in query.steps.enumerated() {
            statement.append(index == 0 ? "(" : " | ")
            statement.append("CASE WHEN event = ")
            statement.bind(.text(step.event))
            statement.appendFilters(step.filters, source: source)
            statement.append(" THEN \(1 << index) ELSE 0 END")
        }
        statement.append(") AS steps, ")
        if let breakdown {
            // The breakdown's value only of the first step's events: the funnel reads no other's,
            // and working it out of the payload is most of a step event's cost.
            statement.append("CASE WHEN event = ")
            statement.bind(.text(query.steps[0].event))
            statement.appendFilters(query.steps[0].filters, source: source)
            statement.append(" THEN \(valueText(breakdown)) END")
        } else {
            statement.append("NULL")
        }
        statement.append(" AS value")
        statement.appendEventsNamed(
            query.eventNames, source: source, from: from, to: to, filters: query.filters, people: query.people,
            mergesJoined: !storedKeys)
        statement.append(") q WHERE steps <> 0")
        return statement
    }

    /// The funnel rows of `person, timestamp, steps, value, seq` rows.
    static func funnelRows(_ rows: [SQLRow]) -> [FunnelRow] {
        rows.compactMap { row in
            guard let person = row[0].int, let timestamp = row[1].int, let steps = row[2].int, let sequence = row[4].int
            else { return nil }
            return FunnelRow(
                person: person, timestamp: timestamp, steps: Int(steps), value: row[3].text, sequence: sequence)
        }
    }

    /// The funnel's range and window as two halves, read at once on two connections (a statement
    /// reads on one core: SQLite always; PostgreSQL 15 plans this scan without parallel workers);
    /// the rows carry their order of arrival, so the funnel orders a person's events at one time
    /// the same way whichever half or statement read them.
    func funnelRowsByHalves(
        query: FunnelQuery, _ read: @escaping @Sendable (Int64, Int64) async throws -> [FunnelRow]
    ) async throws -> [FunnelRow] {
        let from = query.range.from
        let to = query.range.to + query.window
        let middle = from / 2 + to / 2
        guard middle > from else { return try await read(from, to) }
        async let early = read(from, middle)
        let late = try await read(middle, to)
        return try await early + late
    }
}
