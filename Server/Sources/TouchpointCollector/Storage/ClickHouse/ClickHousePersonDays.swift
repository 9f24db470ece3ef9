import Logging
import TouchpointCore

/// Each person's events of a day, kept by ClickHouse as the events are inserted: what paths read
/// (``ClickHouseInsights/paths(_:names:)``), so that their cost follows people and days rather
/// than events.
///
/// **The table.** One row per source, day (`toDate(time)`, as the events' key and partitions
/// have it), person (`person_hash` and `anonymous`, as ``ClickHouseEvents/personColumns``) and
/// anonymous id (`anonymous_hash`, CityHash64 of the event's anonymous id, so a deletion by
/// anonymous id finds the rows of the events it deletes); `events` holds each named event of the
/// row as one number, the top 37 bits of CityHash64 of its name and, below them, its milliseconds
/// since the day's start (a day of 25 hours is 90,000,000 ms, under 2²⁷). An
/// `AggregatingMergeTree` of `groupArray` states: each insert adds a row per person and day it
/// holds, and ClickHouse's merges fold the rows of one key into one. A read never needs them
/// folded: it gathers every row of a person.
///
/// **Kept by ClickHouse.** A materialized view (``writerName``) adds the rows of each insert into
/// `events`, whoever inserts it (a collector of an earlier release too). A resent message's copy
/// adds its event again: the same number, at the same place of the person's sorted events, which
/// a path counts once (it counts a run of one event once). A deletion reaches the table with the
/// events' (``ClickHouseEvents/delete(source:userIds:anonymousIds:)``), retention drops its months
/// with theirs, and reads skip what the retention cut hides.
///
/// **Names by hash.** Two of a source's n event names share their 37 bits with a probability of
/// about n² / 2³⁸ (4 × 10⁻⁸ for 100 names): a path would then count one as the other.
enum ClickHousePersonDays {
    /// The table's name in the client's database.
    static let table = "person_days"

    /// The materialized view that fills ``table`` from each insert into the events.
    static let writerName = "person_days_writer"

    /// The table of rollups filled from the events a table held before they existed; a row names
    /// each one whose filling finished (``prepare(_:eventsExisted:)``).
    static let filledTable = "rollups_filled"

    /// How many bits of an event's number hold its milliseconds since the day's start.
    static let timeBits = 27

    static let createStatement = """
        CREATE TABLE IF NOT EXISTS \(table) (
            source String,
            day Date,
            person_hash UInt64,
            anonymous UInt8,
            anonymous_hash UInt64,
            events AggregateFunction(groupArray, UInt64)
        ) ENGINE = AggregatingMergeTree
        PARTITION BY toYYYYMM(day)
        ORDER BY (source, day, person_hash, anonymous, anonymous_hash)
        """

    /// The rows of the events `FROM from` (with `where`, if any): what the view and the filling
    /// insert.
    static func rows(from: String, where condition: String? = nil) -> String {
        let number = """
            bitOr(bitShiftLeft(\(nameBits("event")), \(timeBits)), \
            toUInt64((toUInt32(time) - toUInt32(toDateTime(toDate(time)))) * 1000 + time_ms))
            """
        return """
            SELECT source, toDate(time) AS day, person_hash, anonymous, cityHash64(anonymous_id) AS anonymous_hash,
                groupArrayState(\(number)) AS events
            FROM \(from) WHERE event != ''\(condition.map { " AND \($0)" } ?? "")
            GROUP BY source, day, person_hash, anonymous, anonymous_hash
            """
    }

    static let writerStatement =
        "CREATE MATERIALIZED VIEW IF NOT EXISTS \(writerName) TO \(table) AS \(rows(from: ClickHouseEvents.table))"

    static let filledStatement = """
        CREATE TABLE IF NOT EXISTS \(filledTable) (name String) ENGINE = MergeTree ORDER BY name
        """

    /// The bits of `name`'s number that stand for an event name (an expression of a `String`).
    static func nameBits(_ name: String) -> String {
        "bitShiftRight(cityHash64(\(name)), \(timeBits))"
    }

    /// Creates the table and its view. When the events existed before the table did (a database
    /// of an earlier release), fills it from them once, after the view exists, so no insert is
    /// missed: an event inserted in between is added twice, which no path counts. Until the
    /// filling has finished (a start that fails midway fills again), the table is not read.
    static func prepare(_ client: ClickHouseClient, eventsExisted: Bool) async throws {
        try await client.execute(createStatement)
        try await client.execute(writerStatement)
        try await client.execute(filledStatement)
        let filled = try await client.rows(
            "SELECT count() AS n FROM \(filledTable) WHERE name = \(ClickHouseClient.literal(table))")
        guard filled.first?["n"]?.intValue == 0 else { return }
        if eventsExisted {
            client.logger.notice(
                "filling each person's events by day from the events table, once: this reads every event",
                metadata: ["table": "\(table)"])
            try await client.execute(
                "INSERT INTO \(table) \(rows(from: ClickHouseEvents.table))", timeout: .seconds(3600))
        }
        try await client.insert(into: filledTable, rows: [["name": .string(table)]])
    }

    /// The condition on the table's rows that holds the events of `userIds` and `anonymousIds`:
    /// as ``ClickHouseEvents/delete(source:userIds:anonymousIds:)`` finds them, by hash.
    static func rowsOf(userIds: [String], anonymousIds: [String]) -> String? {
        func hashes(_ ids: [String]) -> String {
            ids.map { "cityHash64(\(ClickHouseClient.literal($0)))" }.joined(separator: ", ")
        }
        var conditions: [String] = []
        if !userIds.isEmpty { conditions.append("(anonymous = 0 AND person_hash IN (\(hashes(userIds))))") }
        if !anonymousIds.isEmpty { conditions.append("anonymous_hash IN (\(hashes(anonymousIds)))") }
        return conditions.isEmpty ? nil : conditions.joined(separator: " OR ")
    }
}
