import Foundation
import TouchpointCore

/// The insights that read events — trends (counts, people, the numeric maths, breakdowns),
/// funnels and paths — answered by ClickHouse when it holds the events (`--events clickhouse://…`), with the
/// same answers as the SQL stores give (``SQLCollectorStorage``'s statements of the same names).
///
/// **People.** A SQL store counts integers (``PersonKeys``); ClickHouse counts the hashes of the
/// id strings they stand for (`person_hash`, see ``ClickHouseEvents/prepare()``): an event's
/// person is its user id, else the user its anonymous id was merged into, else the anonymous id —
/// the same person a SQL store finds. The merges live in PostgreSQL (the identity rules run in its transactions);
/// each query gets the source's merges as an external table (`merges`, sent with the query, its
/// ids hashed in ClickHouse), so a merge counts from the moment it is committed, and a deletion,
/// which removes the merges it names, counts at once too. Counting, joining and sorting numbers
/// rather than strings is what keeps a read's cost near that of reading its rows. A read that
/// counts no one (a trend's counts beside the daily people, a breakdown's top values) is made
/// without the merges: neither PostgreSQL reads them nor ClickHouse joins them.
///
/// **What stays in PostgreSQL.** A query with a cohort or a filter on people's traits is
/// answered by PostgreSQL, which holds every event too: both name people by their numbers and
/// traits, which PostgreSQL keeps. Retention, active people, stickiness, lifecycle and a trend's
/// people by days, weeks or months without filters (per interval and over the range) read the
/// daily people (``DailyPeopleRollup``) kept at ingest, whose cost follows people and days.
///
/// **Time.** Each query may run ``ClickHouseClient/queryTimeLimit`` (60 s unless configured),
/// longer than ingest's statements (an insight over months reads all their events), bounded so
/// that a query nobody waits for any more does not hold the server's cores; past it the read fails
/// with ``StorageError/Code/queryTooSlow`` and the request is answered `422`.
///
/// Every read counts each message once: through ``ClickHouseEvents/select(_:source:where:)``, or, for
/// a trend's counts and people, by taking each resent message's extra copies back off (see
/// `trendSelect`). ClickHouse's `/` divides as floating point, so intervals are computed with
/// `intDiv`.
struct ClickHouseInsights: Sendable {
    let client: ClickHouseClient
    let source: String
    /// The source's merges: `anonymous_id String, merged String`; nil for reads that count no one.
    let merges: ClickHouseExternalTable?

    /// The insights of `source` over `client`'s events, with the source's `merges` (each merged
    /// anonymous id and the user id it was merged into), or nil for the reads that name no person
    /// (``trendTotals(_:people:)`` without people, ``trendTopValues(_:property:limit:)``).
    init(client: ClickHouseClient, source: String, merges: [(anonymous: String, user: String)]?) {
        self.client = client
        self.source = source
        guard let merges else {
            self.merges = nil
            return
        }
        var lines: [UInt8] = []
        var writer = JSONWriter()
        for merge in merges {
            writer.reset()
            writer.value(.object(["anonymous_id": .string(merge.anonymous), "merged": .string(merge.user)]))
            lines += writer.bytes
            lines.append(UInt8(ascii: "\n"))
        }
        self.merges = ClickHouseExternalTable(
            name: "merges", structure: "anonymous_id String, merged String", rows: lines)
    }

    /// Whether ClickHouse can answer a query with these filters and cohort: not one on people's
    /// traits or with a cohort (see the type's documentation).
    static func answers(filters: [PropertyFilter], people: Set<Int64>?) -> Bool {
        people == nil && filters.allSatisfy { $0.scope == .event }
    }

    // MARK: Trends

    /// Counts, distinct people and the math's aggregate per interval of the trend's events.
    func trendTotals(_ query: TrendQuery, people: Bool = true) async throws -> TrendTotals {
        let sql = trendSelect(query, keys: ["idx"], people: people, columns: "\(index(query)) AS idx")
        var totals: TrendTotals = [:]
        for row in try await rows(sql) {
            guard let index = row["idx"]?.intValue else { continue }
            totals[Int64(index)] = Self.count(row)
        }
        return totals
    }

    /// Counts, distinct people and the math's aggregate over the trend's whole range.
    func trendAggregate(_ query: TrendQuery) async throws -> TrendCount {
        let rows = try await rows(trendSelect(query, keys: ["idx"], people: true, columns: "0 AS idx"))
        return rows.first.map(Self.count) ?? TrendCount(count: 0, users: 0, aggregate: nil)
    }

    /// The `limit` most frequent values of `property` among the trend's events, absent ones left out.
    func trendTopValues(_ query: TrendQuery, property: String, limit: Int) async throws -> [String] {
        let sql: ClickHouseSQL = """
            SELECT val, count() AS n FROM (\(events([query.event], from: query.range.from, to: query.range.to,
                filters: query.filters, where: Self.has(property), columns: "\(Self.text(property)) AS val",
                person: false)))
            GROUP BY val ORDER BY n DESC, val LIMIT \(limit)
            """
        return try await rows(sql).compactMap { $0["val"]?.stringValue }
    }

    /// Counts, distinct people and the math's aggregate per interval and value of `property`
    /// (nil: absent); nil when there are more than `limit` pairs.
    func trendByValue(_ query: TrendQuery, property: String, limit: Int) async throws -> [TrendRow]? {
        let sql = trendSelect(
            query, keys: ["idx", "present", "val"], people: true,
            columns: "\(index(query)) AS idx, \(Self.has(property)) AS present, \(Self.text(property)) AS val",
            suffix: " LIMIT \(limit + 1)")
        let rows = try await rows(sql)
        guard rows.count <= limit else { return nil }
        return rows.compactMap { row in
            guard let index = row["idx"]?.intValue else { return nil }
            let value = row["present"]?.intValue == 1 ? row["val"]?.stringValue : nil
            return TrendRow(index: Int64(index), value: value, isOther: false, Self.count(row))
        }
    }

    /// Counts, distinct people and the math's aggregate per interval and breakdown value: each of
    /// the `top` values on its own, absent values together, every other value as "other".
    func trendBreakdown(_ query: TrendQuery, property: String, top: [String]) async throws -> [TrendRow] {
        let isTop: ClickHouseSQL = top.isEmpty ? "0" : "has([\(list: top)], val)"
        // kind 0: a top value; 1: absent; 2: other.
        let columns: ClickHouseSQL = """
            \(index(query)) AS idx, \(Self.has(property)) AS present, \(Self.text(property)) AS val, \
            multiIf(present AND \(isTop), 0, NOT present, 1, 2) AS kind, if(kind = 0, val, '') AS value
            """
        let sql = trendSelect(query, keys: ["idx", "kind", "value"], people: true, columns: columns)
        return try await rows(sql).compactMap { row in
            guard let index = row["idx"]?.intValue, let kind = row["kind"]?.intValue else { return nil }
            return TrendRow(
                index: Int64(index), value: kind == 0 ? row["value"]?.stringValue : nil, isOther: kind == 2,
                Self.count(row))
        }
    }

    /// The interval of an event's `ts`, as ``AnalyticsRange/sqlIndex(_:)`` computes it.
    private func index(_ query: TrendQuery) -> ClickHouseSQL {
        let index = query.range.calendar.sqlIndex(
            "ts", query.interval, from: query.range.from, to: query.range.to,
            quotient: { "intDiv(\($0), \($1))" })
        return "\(raw: index)"
    }

    /// A trend's groups by `keys` of the trend's events given `columns`: `n` events, `people`
    /// distinct people (0 when not `people`) and `agg`, the math's aggregate of its property (NULL
    /// when the group has no number, or the math needs none).
    ///
    /// Without a property, every row is counted in one read and each resent message's extra
    /// copies are taken off after, read through the sorting key (a copy has its first copy's
    /// event, time and properties, so it is in the same group; people are counted distinct, so a
    /// copy adds none): the read of a message once (``ClickHouseEvents/select(_:source:where:)``)
    /// would read the range twice.
    private func trendSelect(
        _ query: TrendQuery, keys: [ClickHouseSQL], people: Bool, columns: ClickHouseSQL, suffix: ClickHouseSQL = ""
    ) -> ClickHouseSQL {
        let list = keys.joined(separator: ", ")
        let distinct: ClickHouseSQL = people ? "uniqExactIf(person, person != 0)" : "0"
        guard query.measure.property != nil else {
            let range = (from: query.range.from, to: query.range.to)
            return """
                SELECT \(list), sum(c) AS n, sum(p) AS people, NULL AS agg FROM (
                    SELECT \(list), toInt64(count()) AS c, toUInt64(\(distinct)) AS p
                    FROM (\(events([query.event], from: range.from, to: range.to, filters: query.filters,
                        columns: people ? "\(columns), person" : columns, person: people, rows: .every)))
                    GROUP BY \(list)
                    UNION ALL
                    SELECT \(list), toInt64(uniqExact(message_id)) - toInt64(count()) AS c, toUInt64(0) AS p
                    FROM (\(events([query.event], from: range.from, to: range.to, filters: query.filters,
                        columns: "\(columns), message_id", person: false, rows: .resentCopies)))
                    GROUP BY \(list)
                ) GROUP BY \(list)\(suffix)
                """
        }
        var inner = columns
        var aggregate: ClickHouseSQL = "NULL"
        var innerAggregates: ClickHouseSQL = ""
        if let property = query.measure.property {
            inner = "\(inner), \(Self.number(property)) AS num"
            let values: ClickHouseSQL =
                switch query.measure {
                case .sum: "sumIf(num, NOT isNaN(num))"
                case .average: "avgIf(num, NOT isNaN(num))"
                default: "arraySort(groupArrayIf(num, NOT isNaN(num)))"
                }
            innerAggregates = ", countIf(NOT isNaN(num)) AS numbers, \(values) AS s"
            switch query.measure {
            case .median: aggregate = Self.percentile(0.5)
            case .p90: aggregate = Self.percentile(0.9)
            default: aggregate = "s"
            }
            aggregate = "if(numbers = 0, NULL, \(aggregate))"
        }
        return """
            SELECT \(list), n, people, \(aggregate) AS agg FROM (
                SELECT \(list), count() AS n, \(distinct) AS people\(innerAggregates)
                FROM (\(events([query.event], from: query.range.from, to: query.range.to, filters: query.filters,
                    columns: people ? "\(inner), person" : inner, person: people)))
                GROUP BY \(list)
            )\(suffix)
            """
    }

    /// The `fraction` percentile of the sorted numbers `s` (`numbers` of them, at least one),
    /// interpolated between the two nearest ranks as PostgreSQL's `percentile_cont`.
    private static func percentile(_ fraction: Double) -> ClickHouseSQL {
        let position: ClickHouseSQL = "(\(fraction) * (numbers - 1))"
        let below: ClickHouseSQL = "toUInt64(floor(\(position)))"
        return "s[\(below) + 1] + (\(position) - floor(\(position))) * (s[\(below) + 2] - s[\(below) + 1])"
    }

    /// The three counts of a trend's group row.
    private static func count(_ row: [String: JSONValue]) -> TrendCount {
        let aggregate: Double? =
            switch row["agg"] {
            case .double(let value)?: value
            case .int(let value)?: Double(value)
            default: nil
            }
        return TrendCount(count: row["n"]?.intValue ?? 0, users: row["people"]?.intValue ?? 0, aggregate: aggregate)
    }

    // MARK: Funnels

    /// Every event of the funnel's steps from its start to `window` after its end that meets the
    /// funnel's filters, with the person (its hash, as a number), the steps it is and the
    /// breakdown property's value, in no order (the funnel sorts them).
    func funnelRows(_ query: FunnelQuery) async throws -> [FunnelRow] {
        let names = query.eventNames
        var steps: [ClickHouseSQL] = []
        for (index, step) in query.steps.enumerated() {
            let conditions = ["event = \(step.event)"] + step.filters.map(Self.condition)
            steps.append("if(\(conditions.joined(separator: " AND ")), \(1 << index), 0)")
        }
        // The breakdown's value only of the first step's events: the funnel reads no other's.
        let value: ClickHouseSQL =
            query.breakdown.map { property -> ClickHouseSQL in
                """
                toUInt8(bitAnd(steps, 1) = 1 AND \(Self.has(property))) AS present, \
                toString(if(present, \(Self.text(property)), '')) AS val
                """
            } ?? "toUInt8(0) AS present, '' AS val"
        let sql: ClickHouseSQL = """
            SELECT toUInt64(person), toInt64(ts), toUInt16(steps), present, val FROM (\(events(names,
                from: query.range.from, to: query.range.to + query.window, filters: query.filters,
                columns: "person, ts, (\(steps.joined(separator: " + "))) AS steps, \(value)")))
            WHERE steps != 0 AND person != 0
            """
        // As binary rows read in place: a funnel reads every step event of the range (1.6 M at
        // 50 M), which as JSON objects, or as text with a string or an array per row, cost several
        // times ClickHouse's own work. Unsorted: the funnel's one sort costs less than ClickHouse's.
        var rows: [FunnelRow] = []
        try await client.forEachRow(sql, external: external, timeLimit: client.queryTimeLimit) { reader in
            let person = reader.uint64()
            let timestamp = reader.int64()
            let steps = reader.uint16()
            let present = reader.uint8() != 0
            let value = reader.string()
            rows.append(
                FunnelRow(
                    person: Int64(bitPattern: person), timestamp: timestamp, steps: Int(steps),
                    value: present ? value : nil))
        }
        return rows
    }

    // MARK: Paths

    /// How many people went each way from the path's event, as ``SQLCollectorStorage``'s
    /// `paths(source:query:)` counts them, over the events named `names` (the source's names less
    /// the query's exclusions).
    ///
    /// Each event is one number, its time times `names.count + 1` plus its name's place in `names`,
    /// so each person's events are one array of numbers to sort (ClickHouse gathers numbers many
    /// times faster than tuples with text) and their ways are worked out in arrays, with no join.
    /// Events of one person at the same millisecond are ordered by name (a SQL store orders them
    /// as they arrived).
    func paths(_ query: PathQuery, names: [String]) async throws -> [PathCount] {
        guard let start = names.firstIndex(where: { ExactText($0) == ExactText(query.event) }) else { return [] }
        let base = names.count + 1
        let list: ClickHouseSQL = "[\(list: names)]"
        let time: ClickHouseSQL = "intDiv(x, \(base))"
        let way: ClickHouseSQL =
            switch query.direction {
            case .after: "arrayFilter(x -> \(time) <= at + \(query.window), arraySlice(evs, a))"
            case .before: "arrayReverse(arrayFilter(x -> \(time) >= at - \(query.window), arraySlice(evs, 1, a)))"
            }
        let read = query.readRange
        // Each person's first start in the range (`first`), read from the start's events alone;
        // of the rest, only the events within the window of it are gathered (and sorted) per person.
        let near: ClickHouseSQL =
            switch query.direction {
            case .after: "ts >= first AND ts <= first + \(query.window)"
            case .before: "ts <= first AND ts >= first - \(query.window)"
            }
        let starts: ClickHouseSQL = """
            SELECT person, min(ts) AS first FROM (\(events([query.event], from: query.range.from,
                to: query.range.to, filters: [], columns: "ts, person")))
            WHERE person != 0 GROUP BY person
            """
        let sql: ClickHouseSQL = """
            SELECT path, count() AS people FROM (
                SELECT arraySort(groupArray(ts * \(base) + indexOf(\(list), event))) AS evs,
                    arrayFirstIndex(x -> x % \(base) = \(start + 1) AND \(time) >= \(query.range.from)
                        AND \(time) < \(query.range.to), evs) AS a,
                    intDiv(evs[a], \(base)) AS at,
                    arrayMap(x -> x % \(base), \(way)) AS codes,
                    arrayFilter((c, i) -> i = 1 OR c != codes[i - 1], codes, arrayEnumerate(codes)) AS kept
                FROM (
                    SELECT ts, event, person
                    FROM (\(events(names, from: read.from, to: read.to, filters: [], columns: "ts, event, person")))
                    ALL INNER JOIN (\(starts)) USING person
                    WHERE \(near)
                )
                GROUP BY person HAVING a > 0
            ) GROUP BY arraySlice(kept, 2, \(query.steps)) AS path
            """
        return try await rows(sql).compactMap { row in
            guard case .array(let codes)? = row["path"], let people = row["people"]?.intValue else { return nil }
            let events = codes.compactMap {
                $0.intValue.flatMap { names.indices.contains($0 - 1) ? names[$0 - 1] : nil }
            }
            return PathCount(events: events, people: people)
        }
    }

    // MARK: Events

    /// Which rows of the events a read takes.
    private enum EventRows {
        /// Each message once (``ClickHouseEvents/select(_:source:where:)``).
        case once
        /// Every row, a resent message's copies each (``ClickHouseEvents/everyRow(_:source:where:)``).
        case every
        /// The copies of resent messages alone, with `message_id`
        /// (``ClickHouseEvents/resentCopies(_:source:names:where:)``).
        case resentCopies
    }

    /// `SELECT columns` of the events of `names` in `from ..< to` that pass `filters` (and
    /// `where`), with `ts` (milliseconds since 1970), `event`, the property arrays and, when
    /// `person`, the person (merges resolved: the insights must have been made with the merges;
    /// `UInt64`, 0 for an event without ids) to read, of the `rows` asked for.
    private func events(
        _ names: [String], from: Int64, to: Int64, filters: [PropertyFilter], where extra: ClickHouseSQL? = nil,
        columns: ClickHouseSQL, person: Bool = true, rows: EventRows = .once
    ) -> ClickHouseSQL {
        let firstSecond = max(0, min(from >= 0 ? from / 1000 : -1, Int64(UInt32.max)))
        let lastSecond = max(0, min(to / 1000 + 1, Int64(UInt32.max)))
        let lastDaySecond = max(0, min(to > 0 ? (to - 1) / 1000 : 0, Int64(UInt32.max)))
        var conditions: [ClickHouseSQL] = [
            names.count == 1 ? "event = \(names[0])" : "event IN (\(list: names))",
            "time >= toDateTime(\(firstSecond))", "time <= toDateTime(\(lastSecond))",
            // The days of the range on the key's `toDate(time)`, by which ClickHouse 18.16 narrows
            // the granules it reads (a condition on `time` alone only picks the months'
            // partitions); the last is that of `to`'s millisecond before.
            "toDate(time) >= toDate(toDateTime(\(firstSecond)))",
            "toDate(time) <= toDate(toDateTime(\(lastDaySecond)))",
            "ts >= \(from)", "ts < \(to)", ClickHouseEvents.afterCut(of: source),
        ]
        conditions += filters.map(Self.condition)
        if let extra { conditions.append(extra) }
        let personColumns: ClickHouseSQL = person ? " person_hash, anonymous," : ""
        let storedColumns: ClickHouseSQL = """
            event, toInt64(time) * 1000 + time_ms AS ts,\(personColumns)
                property_keys, property_texts, property_numbers, property_numeric
            """
        let stored =
            switch rows {
            case .once: ClickHouseEvents.select(storedColumns, source: source, where: conditions)
            case .every: ClickHouseEvents.everyRow(storedColumns, source: source, where: conditions)
            case .resentCopies:
                ClickHouseEvents.resentCopies(storedColumns, source: source, names: names, where: conditions)
            }
        guard person else {
            return "SELECT \(columns) FROM (\(stored))"
        }
        precondition(merges != nil, "ClickHouseInsights made without the merges read a person")
        // A merge names an anonymous id: every row is looked up, and the merge applies to the
        // events sent without a user id, whose `person_hash` is their anonymous id's (a user id
        // that reads like a merged anonymous id is not merged). No match leaves `merged_hash` 0.
        return """
            SELECT \(columns) FROM (
                SELECT event, ts, if(anonymous AND merged_hash != 0, merged_hash, person_hash) AS person,
                    property_keys, property_texts, property_numbers, property_numeric
                FROM (\(stored)) ANY LEFT JOIN (
                    SELECT cityHash64(anonymous_id) AS person_hash, cityHash64(merged) AS merged_hash FROM merges
                ) USING person_hash
            )
            """
    }

    private func rows(_ sql: ClickHouseSQL) async throws -> [[String: JSONValue]] {
        try await client.rows(sql, external: external, timeLimit: client.queryTimeLimit)
    }

    /// The tables sent with a read: the merges, when made with them.
    private var external: [ClickHouseExternalTable] { merges.map { [$0] } ?? [] }

    // MARK: Properties

    /// Whether the event has `property` (not null): ``PropertyColumns``.
    static func has(_ property: String) -> ClickHouseSQL { "has(property_keys, \(property))" }

    /// `property`'s text (empty when absent: test ``has(_:)``).
    static func text(_ property: String) -> ClickHouseSQL {
        "property_texts[indexOf(property_keys, \(property))]"
    }

    /// `property` as a number; `nan` when absent or not a JSON number.
    static func number(_ property: String) -> ClickHouseSQL {
        let index: ClickHouseSQL = "indexOf(property_keys, \(property))"
        return "if(\(index) != 0 AND property_numeric[\(index)] = 1, property_numbers[\(index)], nan)"
    }

    /// The condition of an event-scoped `filter`, as ``SQLDialect/appendCondition(_:text:number:to:)``
    /// writes it for the SQL stores.
    static func condition(_ filter: PropertyFilter) -> ClickHouseSQL {
        let has = has(filter.property)
        let text = text(filter.property)
        switch filter.op {
        case .equals: return "(\(has) AND \(text) = \(filter.value))"
        case .notEquals: return "NOT (\(has) AND \(text) = \(filter.value))"
        case .contains:
            // `lower` folds ASCII letters only, as the SQL stores do.
            return "(\(has) AND position(lower(\(text)), \(PropertyFilter.folded(filter.value))) > 0)"
        case .greaterThan: return "(\(number(filter.property)) > \(filter.number ?? 0))"
        case .lessThan: return "(\(number(filter.property)) < \(filter.number ?? 0))"
        case .isSet: return has
        }
    }
}
