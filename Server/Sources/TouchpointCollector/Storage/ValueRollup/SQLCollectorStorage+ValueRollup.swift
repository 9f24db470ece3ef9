import Logging
import TouchpointCore

extension SQLCollectorStorage {
    // MARK: Preparing

    /// Sets the properties each source's breakdowns keep (``ValueRollup``) for the writers: a
    /// property kept before, in the same time zone, goes on; one dropped has its rows deleted; one
    /// new, or kept in another zone (its rows deleted), is counted by ingest from now on and the
    /// events stored before are counted in the background (by ``DailyPeopleBackfill``, which this
    /// starts when `build`). Call after ``prepareDailyPeople(calendars:logger:build:)`` (which sets
    /// the zones) and before the collector takes events.
    func prepareValueRollup(properties: [String: [String]], logger: Logger, build: Bool = true) async throws {
        let dialect = self.dialect
        let kept = calendars.rollups
        let zones = calendars.all
        let writer = self.writer
        try await backend.write { transaction in
            // In the order a batch of the count takes them (``ValueRollup/runBatch(_:calendars:limit:)``).
            _ = try await Self.dailyPeopleChanges(in: transaction, dialect: dialect)
            var sources = Set(properties.filter { !$0.value.isEmpty }.keys)
            for row in try await transaction.query("SELECT DISTINCT source FROM value_rollups", []) {
                if let source = row[0].text { sources.insert(source) }
            }
            var deleted = false
            for source in sources.sorted() {
                let wanted = Set(properties[source] ?? [])
                let zone = (zones[source] ?? .utc).identifier
                var read = SQLStatement(dialect, "SELECT property, time_zone FROM value_rollups WHERE source = ")
                read.bind(.text(source))
                var going = Set<String>()
                for row in try await transaction.query(read) {
                    guard let property = row[0].text, let stored = row[1].text else { continue }
                    if wanted.contains(property), stored == zone {
                        going.insert(property)
                        continue
                    }
                    logger.notice(
                        wanted.contains(property)
                            ? "a source's time zone changed: the rollup of a property's values is counted again in the background"
                            : "a property is no longer kept for breakdowns: its rollup is deleted",
                        metadata: ["source": "\(source)", "property": "\(property)"])
                    try await Self.deleteValueRows(
                        ValueRollup.prefix(of: source, property: property), in: transaction, dialect: dialect)
                    var forget = SQLStatement(dialect, "DELETE FROM value_rollups WHERE source = ")
                    forget.bind(.text(source))
                    forget.append(" AND property = ")
                    forget.bind(.text(property))
                    _ = try await transaction.query(forget)
                    deleted = true
                }
                for property in wanted.sorted() where !going.contains(property) {
                    // Ingest counts the events stored after now; the background those up to now.
                    let since =
                        try await transaction.query("SELECT COALESCE(MAX(seq), 0) FROM events", []).first?.first?.int
                        ?? 0
                    var insert = SQLStatement(
                        dialect, "INSERT INTO value_rollups (source, property, time_zone, since_seq, done) VALUES ")
                    insert.bindTuple([.text(source), .text(property), .text(zone), .int(since), .int(0)])
                    _ = try await transaction.query(insert)
                }
                kept.set(source, wanted.sorted())
            }
            if deleted {
                _ = try await transaction.query("UPDATE daily_people_changes SET changes = changes + 1", [])
                writer.forgetDailyPeople()
            }
        }
        if build { backfill.start() }
    }

    /// Deletes the rows of every value source that begins with `prefix`.
    static func deleteValueRows(_ prefix: String, in transaction: any SQLTransaction, dialect: SQLDialect)
        async throws
    {
        for table in ["daily_people", "event_minutes"] {
            var delete = SQLStatement(dialect, "DELETE FROM \(table) WHERE source >= ")
            delete.bind(.text(prefix))
            delete.append(" AND source < ")
            delete.bind(.text(ValueRollup.end(of: prefix)))
            _ = try await transaction.query(delete)
        }
    }

    // MARK: Reading

    /// A trend's rows per interval and value of its breakdown (each of the top values, absent, and
    /// "other"), read from the rollup; nil when the rollup cannot answer it exactly and the events
    /// must be read: a property the source does not keep, or whose events stored before it was
    /// kept are still being counted, a range that does not begin at the start of a local day, intervals of hours, filters, a
    /// cohort, a math over a property or of active people, a value of another type than text in
    /// the range, or more than ``ValueRollup/mostValues`` values.
    ///
    /// Counts come from the values' rows per minute, the part of a minute at the range's end from
    /// the events; people from the values' daily people, by whole local days (as the totals').
    func trendFromValueRollup(source: String, query: TrendQuery) async throws -> [TrendRow]? {
        guard let property = query.breakdown, query.interval != .hour, query.filters.isEmpty, query.people == nil,
            query.cohort == nil
        else { return nil }
        switch query.measure {
        case .total, .users: break
        default: return nil
        }
        let range = query.range
        let calendar = range.calendar
        guard range.from >= SourceCalendar.wholeMinuteOffsetsSince,
            calendar.start(ofDay: range.days.lowerBound) == range.from,
            try await valueRollupComplete(source: source, property: property, zone: calendar.identifier)
        else { return nil }
        let prefix = ValueRollup.prefix(of: source, property: property)
        let names = try await valueSources(prefix)
        guard names.count <= ValueRollup.mostValues else { return nil }
        let values = Dictionary(
            names.compactMap { name in
                ValueRollup.value(ofSource: name, source: source, property: property).map { (name, $0) }
            }, uniquingKeysWith: { first, _ in first })
        // No value found: nothing was stored since the property was kept, and the events say so.
        guard !values.isEmpty else { return nil }
        let end = range.to / 60_000
        let first = range.from / 60_000
        // Counts per value and interval.
        var counts: [ValueRollup.Value: [Int64: Int]] = [:]
        if first < end {
            for row in try await eventMinutes.counts(
                sources: Array(values.keys), event: query.event, minutes: first..<end, calendar: calendar,
                interval: query.interval)
            {
                guard let value = values[row.source], row.count != 0 else { continue }
                counts[value, default: [:]][row.index, default: 0] += Int(row.count)
            }
        }
        if end * 60_000 < range.to {
            // The part of the last minute: its events, by value.
            var statement = SQLStatement(
                dialect, "SELECT timestamp, lifted, payload FROM \(dialect.eventsByName) WHERE source = ")
            statement.bind(.text(source))
            statement.append(" AND event = ")
            statement.bind(.text(query.event))
            statement.append(" AND \(SQLStatement.minuteExpression) = ")
            statement.bind(.int(end))
            statement.append(" AND timestamp < ")
            statement.bind(.int(range.to))
            for row in try await backend.query(statement) {
                guard let timestamp = row[0].int, let lifted = row[1].int, let payload = row[2].text else { continue }
                let value = ValueRollup.values(of: [property], payload: payload, lifted: lifted)[0]
                counts[value, default: [:]][calendar.index(of: timestamp, query.interval), default: 0] += 1
            }
        }
        // A value of another type, or text the rollup does not keep: the events answer.
        if counts[.other]?.values.contains(where: { $0 != 0 }) == true { return nil }
        // The top values, as the events' breakdown picks them.
        var totals: [String: Int] = [:]
        for (value, points) in counts {
            guard case .text(let text) = value else { continue }
            totals[text] = points.values.reduce(0, +)
        }
        let top = Set(
            totals.filter { $0.value > 0 }.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
                .prefix(query.topValues).map(\.key))
        // People per value and day, merges resolved.
        let days = range.days
        var people: [ValueRollup.Value: DailyPeople] = [:]
        for (name, daily) in try await dailyPeople(sources: Array(values.keys), event: query.event, days: days) {
            if let value = values[name] { people[value] = daily }
        }
        let intervals = range.dayRanges(query.interval)
        var rows: [TrendRow] = []
        var otherCounts: [Int64: Int] = [:]
        var otherPeople = DailyPeople()
        for (value, points) in counts {
            let shown: String?
            switch value {
            case .text(let text) where top.contains(text): shown = text
            case .absent: shown = nil
            case .text:
                for (index, count) in points { otherCounts[index, default: 0] += count }
                for (day, set) in (people[value] ?? DailyPeople()).days {
                    otherPeople.days[day, default: PersonSet()].formUnion(set)
                }
                continue
            case .other:
                continue
            }
            let daily = people[value] ?? DailyPeople()
            for entry in intervals {
                let count = points[entry.index] ?? 0
                guard count != 0 else { continue }
                rows.append(
                    TrendRow(
                        index: entry.index, value: shown, isOther: false, count: count,
                        users: daily.union(entry.days).count))
            }
        }
        for entry in intervals {
            guard let count = otherCounts[entry.index], count != 0 else { continue }
            rows.append(
                TrendRow(
                    index: entry.index, value: nil, isOther: true, count: count,
                    users: otherPeople.union(entry.days).count))
        }
        return rows
    }

    /// Whether `source` keeps `property` in `zone` and counts every stored event of it.
    func valueRollupComplete(source: String, property: String, zone: String) async throws -> Bool {
        var statement = SQLStatement(dialect, "SELECT since_seq, done FROM value_rollups WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND property = ")
        statement.bind(.text(property))
        statement.append(" AND time_zone = ")
        statement.bind(.text(zone))
        guard let row = try await backend.query(statement).first, let since = row[0].int, let done = row[1].int
        else { return false }
        return BackfillProgress(done: done, last: since).isComplete
    }

    /// The value sources that begin with `prefix` and hold any minute, in order, up to one more
    /// than ``ValueRollup/mostValues``: each found by a seek of the table's key from the one
    /// before.
    private func valueSources(_ prefix: String) async throws -> [String] {
        let end = ValueRollup.end(of: prefix)
        var statement = SQLStatement(
            dialect, "WITH RECURSIVE v(name) AS (SELECT MIN(source) FROM event_minutes WHERE source >= ")
        statement.bind(.text(prefix))
        statement.append(" AND source < ")
        statement.bind(.text(end))
        statement.append(
            " UNION ALL SELECT (SELECT MIN(source) FROM event_minutes WHERE source > v.name AND source < ")
        statement.bind(.text(end))
        statement.append(") FROM v WHERE v.name IS NOT NULL) SELECT name FROM v WHERE name IS NOT NULL LIMIT ")
        statement.bind(.int(Int64(ValueRollup.mostValues + 1)))
        return try await backend.query(statement).compactMap { $0[0].text }
    }
}
