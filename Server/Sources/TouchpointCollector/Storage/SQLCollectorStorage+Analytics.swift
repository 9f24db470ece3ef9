import Foundation
import TouchpointCore

extension SQLCollectorStorage {
    /// `FROM … WHERE` for some event names of `source` in `from ..< to`, through the
    /// name-and-minute index, with each event's merge joined (for ``PersonKeys/expression``);
    /// only the events of `people` when given (a cohort's).
    func eventsNamed(
        _ names: [String], source: String, from: Int64, to: Int64, people: Set<Int64>? = nil
    ) -> SQLStatement {
        var statement = SQLStatement(dialect)
        appendEventsNamed(names, source: source, from: from, to: to, people: people, to: &statement)
        return statement
    }

    /// Appends ``eventsNamed(_:source:from:to:people:)`` to `statement`.
    func appendEventsNamed(
        _ names: [String], source: String, from: Int64, to: Int64, people: Set<Int64>?,
        to statement: inout SQLStatement
    ) {
        statement.append(" FROM \(dialect.eventsByName)\(PersonKeys.join) WHERE events.source = ")
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
        if let people { statement.appendIsIn(PersonKeys.expression, people) }
    }

    /// `select` + a `FROM … WHERE …` statement + `suffix`, with the statement's bound values
    /// (`select` binds nothing, so the placeholders keep their numbers).
    private func select(_ select: String, _ rest: SQLStatement, suffix: String = "") -> (String, [SQLValue]) {
        (select + rest.sql + suffix, rest.binds)
    }

    // MARK: Trends

    /// The `limit` most frequent values of `property` among the trend's events (absent ones
    /// left out: they always have a series of their own).
    func trendTopValues(source: String, query: TrendQuery, property: String, limit: Int) async throws -> [String] {
        let rest = eventsNamed(
            [query.event], source: source, from: query.range.from, to: query.range.to, people: query.people)
        let (sql, binds) = select(
            "SELECT val, COUNT(*) FROM (SELECT \(dialect.analyticsPropertyText(property)) AS val", rest,
            suffix: ") q WHERE val IS NOT NULL GROUP BY val ORDER BY 2 DESC, val LIMIT \(limit)")
        return try await backend.query(sql, binds).compactMap { $0[0].text }
    }

    /// Counts and distinct people per interval of the trend's events.
    func trendTotals(source: String, query: TrendQuery) async throws -> TrendTotals {
        let rest = eventsNamed(
            [query.event], source: source, from: query.range.from, to: query.range.to, people: query.people)
        let (sql, binds) = select(
            "SELECT idx, COUNT(*), COUNT(DISTINCT person) FROM (SELECT \(query.range.sqlIndex(query.interval)) AS idx, \(PersonKeys.expression) AS person",
            rest, suffix: ") q GROUP BY idx")
        var totals: TrendTotals = [:]
        for row in try await backend.query(sql, binds) {
            guard let index = row[0].int, let count = row[1].int, let users = row[2].int else { continue }
            totals[index] = (Int(count), Int(users))
        }
        return totals
    }

    /// Events per interval of the trend's events, from the name-and-minute index alone (the
    /// people come from the daily people).
    func trendCounts(source: String, query: TrendQuery) async throws -> TrendTotals {
        let rest = eventsNamed(
            [query.event], source: source, from: query.range.from, to: query.range.to, people: query.people)
        let (sql, binds) = select(
            "SELECT idx, COUNT(*) FROM (SELECT \(query.range.sqlIndex(query.interval)) AS idx", rest,
            suffix: ") q GROUP BY idx")
        var totals: TrendTotals = [:]
        for row in try await backend.query(sql, binds) {
            guard let index = row[0].int, let count = row[1].int else { continue }
            totals[index] = (Int(count), 0)
        }
        return totals
    }

    /// Counts and distinct people per interval and value of `property` (nil: absent), and per
    /// interval over all values, in one pass; its rows are nil when there are more than `limit`
    /// (interval, value) pairs (a property with very many values, which
    /// ``trendBreakdown(source:query:property:top:)`` handles instead).
    ///
    /// Every event's row is read (for the property). PostgreSQL counts the pairs and the intervals
    /// in one statement (grouping sets), on parallel workers of its own. SQLite answers a query on
    /// one core and has no grouping sets: there the intervals are counted from the name-and-minute
    /// index alone while the two halves of the range, split where an interval starts so that no
    /// group straddles them, are grouped at once, on three of the reader connections.
    func trendByValue(source: String, query: TrendQuery, property: String, limit: Int) async throws -> TrendPass {
        guard dialect.queriesRunOnOneCore else {
            return try await trendByValueWithTotals(source: source, query: query, property: property, limit: limit)
        }
        async let totals = trendTotals(source: source, query: query)
        guard let middle = Self.middle(of: query.interval, in: query.range) else {
            let rows = try await trendByValueOnce(source: source, query: query, property: property, limit: limit)
            return TrendPass(rows: rows, totals: try await totals)
        }
        var early = query
        var late = query
        early.range.to = middle
        late.range.from = middle
        async let first = trendByValueOnce(source: source, query: early, property: property, limit: limit)
        let second = try await trendByValueOnce(source: source, query: late, property: property, limit: limit)
        guard let first = try await first, let second, first.count + second.count <= limit else {
            return TrendPass(rows: nil, totals: try await totals)
        }
        return TrendPass(rows: first + second, totals: try await totals)
    }

    /// The start of the interval halfway through `from ..< to`; nil when that is one interval.
    static func middle(of interval: AnalyticsInterval, in range: AnalyticsRange) -> Int64? {
        let intervals = range.intervals(interval)
        guard intervals.upperBound > intervals.lowerBound else { return nil }
        return range.calendar.start(of: (intervals.lowerBound + intervals.upperBound + 1) / 2, interval)
    }

    /// PostgreSQL's ``trendByValue(source:query:property:limit:)``: `GROUPING(val)` tells an
    /// interval's total from its pairs. At most `limit` pairs and a total per interval fit in
    /// `limit` + the intervals' count rows, so one row more, whatever their order, means more
    /// pairs than `limit` (and the totals are then left to ``trendTotals(source:query:)``).
    private func trendByValueWithTotals(source: String, query: TrendQuery, property: String, limit: Int)
        async throws -> TrendPass
    {
        let interval = query.interval
        let intervals = query.range.intervals(interval).count
        let rest = eventsNamed(
            [query.event], source: source, from: query.range.from, to: query.range.to, people: query.people)
        let (sql, binds) = select(
            "SELECT idx, val, GROUPING(val), COUNT(*), COUNT(DISTINCT person) FROM (SELECT \(query.range.sqlIndex(interval)) AS idx, \(dialect.analyticsPropertyText(property)) AS val, \(PersonKeys.expression) AS person",
            rest, suffix: ") q GROUP BY GROUPING SETS ((idx, val), (idx)) LIMIT \(limit + intervals + 1)")
        var rows: [TrendRow] = []
        var totals: TrendTotals = [:]
        for row in try await backend.query(sql, binds) {
            guard let index = row[0].int, let isTotal = row[2].int, let count = row[3].int, let users = row[4].int
            else { continue }
            if isTotal == 1 {
                totals[index] = (Int(count), Int(users))
            } else {
                rows.append(
                    TrendRow(index: index, value: row[1].text, isOther: false, count: Int(count), users: Int(users)))
            }
        }
        guard rows.count <= limit else { return TrendPass(rows: nil, totals: nil) }
        return TrendPass(rows: rows, totals: totals)
    }

    private func trendByValueOnce(source: String, query: TrendQuery, property: String, limit: Int) async throws
        -> [TrendRow]?
    {
        let rest = eventsNamed(
            [query.event], source: source, from: query.range.from, to: query.range.to, people: query.people)
        let (sql, binds) = select(
            "SELECT idx, val, COUNT(*), COUNT(DISTINCT person) FROM (SELECT \(query.range.sqlIndex(query.interval)) AS idx, \(dialect.analyticsPropertyText(property)) AS val, \(PersonKeys.expression) AS person",
            rest, suffix: ") q GROUP BY idx, val LIMIT \(limit + 1)")
        let rows = try await backend.query(sql, binds)
        guard rows.count <= limit else { return nil }
        return rows.compactMap { row in
            guard let index = row[0].int, let count = row[2].int, let users = row[3].int else { return nil }
            return TrendRow(index: index, value: row[1].text, isOther: false, count: Int(count), users: Int(users))
        }
    }

    /// Counts and distinct people per interval and breakdown value: each of the `top` values on
    /// its own, absent values together, every other value as "other".
    func trendBreakdown(source: String, query: TrendQuery, property: String, top: [String]) async throws
        -> [TrendRow]
    {
        // kind 0: a top value; 1: absent; 2: other.
        var statement = SQLStatement(
            dialect,
            "SELECT idx, CASE WHEN tops.v IS NOT NULL THEN 0 WHEN q.val IS NULL THEN 1 ELSE 2 END AS kind, CASE WHEN tops.v IS NOT NULL THEN q.val END AS value, COUNT(*), COUNT(DISTINCT person) FROM (SELECT \(query.range.sqlIndex(query.interval)) AS idx, \(dialect.analyticsPropertyText(property)) AS val, \(PersonKeys.expression) AS person"
        )
        let events = eventsNamed(
            [query.event], source: source, from: query.range.from, to: query.range.to, people: query.people)
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
            guard let index = row[0].int, let kind = row[1].int, let count = row[3].int, let users = row[4].int else {
                return nil
            }
            return TrendRow(index: index, value: row[2].text, isOther: kind == 2, count: Int(count), users: Int(users))
        }
    }

    // MARK: Funnels

    /// Every event of the funnel's steps from its start to `window` after its end that meets
    /// the funnel's filters, with the person, the steps it is (its name and filters considered)
    /// and the breakdown property's value. Read through the name-and-minute index: events that
    /// are no step are not read.
    func funnelRows(source: String, query: FunnelQuery) async throws -> [FunnelRow] {
        let names = Array(Set(query.steps.map(\.event))).sorted()
        // Bit i when the event is step i (SQLite and PostgreSQL both read `|` on integers).
        var statement = SQLStatement(
            dialect,
            "SELECT person, timestamp, steps, value FROM (SELECT \(PersonKeys.expression) AS person, timestamp, ")
        for (index, step) in query.steps.enumerated() {
            statement.append(index == 0 ? "(" : " | ")
            statement.append("CASE WHEN event = ")
            statement.bind(.text(step.event))
            PropertyFilterSQL.appendConditions(step.filters, to: &statement)
            statement.append(" THEN \(1 << index) ELSE 0 END")
        }
        statement.append(") AS steps, \(query.breakdown.map(dialect.analyticsPropertyText) ?? "NULL") AS value")
        appendEventsNamed(
            names, source: source, from: query.range.from, to: query.range.to + query.window, people: query.people,
            to: &statement)
        PropertyFilterSQL.appendConditions(query.filters, to: &statement)
        statement.append(") q WHERE steps <> 0")
        return try await backend.query(statement).compactMap { row in
            guard let person = row[0].int, let timestamp = row[1].int, let steps = row[2].int else { return nil }
            return FunnelRow(person: person, timestamp: timestamp, steps: Int(steps), value: row[3].text)
        }
    }
}

extension SQLCollectorStorage {
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
