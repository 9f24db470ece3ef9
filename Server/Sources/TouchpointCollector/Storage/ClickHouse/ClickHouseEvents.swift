import Foundation
import Logging
import TouchpointCore

/// The `events` table kept in ClickHouse for the insights, and what ingest and operations do to it.
///
/// **The table.** One row per stored copy of a message: `DateTime` (seconds, UTC) plus a
/// milliseconds column, since ClickHouse 18.16 has no `DateTime64`; the payload as sent, and its
/// top-level properties again as arrays the insights read (``PropertyColumns``); the person as the
/// number the insights count (`person_hash`, with `anonymous` telling whether the message had no
/// user id: see ``prepare()``), and as the message names it (`person`, an `ALIAS` of the user id,
/// else the anonymous id, so it costs neither ingest nor disk). Partitioned by month
/// (`toYYYYMM(time)`), so retention drops whole partitions. Its statements, and those of the
/// other tables, are ``ClickHouseMigrations``.
///
/// **Deduplication without `FINAL`.** A message reaches ClickHouse twice only when a request is
/// retried after its insert failed or timed out (the insert may have landed all the same); the
/// retry finds the message already in PostgreSQL, whose unique index decides what is new. Such a
/// message is *resent*: before its copy is inserted, its id and time are written to
/// `resent_messages` (``insert(_:resent:source:)``), and the copy is the message as PostgreSQL
/// keeps its first copy (same event, time and payload). So a message whose time is no resent
/// message's has exactly one row, and reads (``select(_:source:where:)``) take the bare table for
/// those and keep one row per id of the few at a resent message's time. The table is a
/// `ReplacingMergeTree` whose sorting key ends in the message id,
/// `(source, event, toDate(time), message_id)`, so ClickHouse's merges also fold the copies on
/// disk, keeping the first received (`version` falls as `received_at` grows).
struct ClickHouseEvents: Sendable {
    let client: ClickHouseClient
    /// Ingest's inserts, gathered across concurrent requests.
    let queue: ClickHouseInsertQueue
    /// The columns of the first releases that the table still stores (one made before), which
    /// ingest goes on filling: found by ``prepare()``.
    private(set) var storedLegacyColumns: Set<LegacyColumn> = []

    init(client: ClickHouseClient) {
        self.client = client
        queue = ClickHouseInsertQueue { [client] lines in
            try await client.insert(into: ClickHouseEvents.table, jsonLines: lines)
        }
    }

    /// The table's name in the client's database.
    static let table = "events"

    /// The ids of the messages inserted more than once (see the type's documentation), by month
    /// of the message, so their month is dropped with the events'.
    static let resentTable = "resent_messages"

    /// `SELECT columns` of `source`'s events that meet `conditions`, each message once. A message
    /// whose time (to the millisecond) is no resent message's has one row, read from the bare
    /// table; the rows at a resent message's time, a few, are kept once per message id. So no read
    /// goes through `FINAL`, and the cost of deduplicating follows the retries, not the rows read.
    /// `conditions` may name the aliases `columns` defines. The rows at resent times are found by
    /// `PREWHERE`, which reads only the time columns of the range and the others of the few
    /// granules that hold such a row.
    static func select(_ columns: ClickHouseSQL, source: String, where conditions: [ClickHouseSQL]) -> ClickHouseSQL {
        let instant: ClickHouseSQL = "toInt64(time) * 1000 + time_ms"
        let resent: ClickHouseSQL = "(SELECT \(instant) FROM \(identifier: resentTable) WHERE source = \(source))"
        let condition = (["source = \(source)"] + conditions).joined(separator: " AND ")
        return """
            SELECT \(columns) FROM \(identifier: table) WHERE \(condition) AND \(instant) NOT IN \(resent)
            UNION ALL
            SELECT \(columns) FROM \(identifier: table) PREWHERE \(instant) IN \(resent) WHERE \(condition) \
            LIMIT 1 BY message_id
            """
    }

    /// `SELECT columns` of every row of `source`'s events that meets `conditions`, a resent
    /// message's copies each (``select(_:source:where:)`` keeps one): for reads that a copy does
    /// not change (people are counted distinct) or that take the copies back off
    /// (``resentCopies(_:source:names:where:)``).
    static func everyRow(_ columns: ClickHouseSQL, source: String, where conditions: [ClickHouseSQL])
        -> ClickHouseSQL
    {
        let condition = (["source = \(source)"] + conditions).joined(separator: " AND ")
        return "SELECT \(columns) FROM \(identifier: table) WHERE \(condition)"
    }

    /// `SELECT columns` of the copies of `source`'s resent messages among its events named
    /// `names` that meet `conditions`, with `message_id`. Found through the sorting key — each
    /// resent message's (source, event, day, id), for each of `names` — so the read touches the
    /// granules that hold them, not every row of the range: a copy has its first copy's event and
    /// time, and every copy's id and time are in `resent_messages`.
    static func resentCopies(
        _ columns: ClickHouseSQL, source: String, names: [String], where conditions: [ClickHouseSQL]
    ) -> ClickHouseSQL {
        let keys: ClickHouseSQL = """
            (SELECT source, name, toDate(time), message_id FROM \(identifier: resentTable) \
            ARRAY JOIN [\(list: names)] AS name WHERE source = \(source))
            """
        let condition = (["source = \(source)"] + conditions).joined(separator: " AND ")
        return """
            SELECT \(columns), message_id FROM \(identifier: table) WHERE \(condition) \
            AND (source, event, toDate(time), message_id) IN \(keys)
            """
    }

    /// Columns of the table's first releases that no read uses, which ``ClickHouseMigrations``
    /// version 1 declares otherwise: `person` is an alias now, and `properties` (the properties as
    /// JSON text) repeated the payload's. A table made before keeps them, and ingest fills them
    /// there, so that collectors of either release can write to it. Once every collector is of
    /// this release, `ALTER TABLE events DROP COLUMN properties, DROP COLUMN person` frees their
    /// space; the next start adds `person` back as the alias (``prepare()``), and collectors
    /// started before the `ALTER` must be restarted, or their inserts name columns the table no
    /// longer has.
    enum LegacyColumn: String, CaseIterable, Sendable {
        case person
        case properties
    }

    /// Brings the tables up to date (``ClickHouseMigrations``) and finds the ``LegacyColumn``s
    /// `events` stores (``storedLegacyColumns``). Beside an `events` table made before
    /// ``resentTable`` existed, that table is first made from the copies `events` holds
    /// (``markEarlierCopies()``), and an `events` whose stored `person` was dropped gets it back
    /// as the alias version 1 declares.
    ///
    /// The person's columns (migration 4) are the person as a number, for the insights to count,
    /// join and sort (a string of 36 bytes and more per row cost them most of their time):
    /// `person_hash`, CityHash64 of the user id, else of the anonymous id (0 for a message without
    /// ids), and `anonymous`, 1 when the message had no user id (its person is then its anonymous
    /// id, which a merge may name). Computed by ClickHouse as rows are written (`MATERIALIZED`:
    /// ingest sends neither), and from the stored ids on reading the parts written before them.
    /// Two of the n distinct ids a read hashes (its events' user and anonymous ids, and the
    /// source's merged anonymous ids and users) share a hash with a probability of about n² / 2⁶⁵
    /// (7 × 10⁻⁹ for 500,000): two people would then count as one, or an anonymous id would follow
    /// the other's merge; an id hashed to 0 (about n / 2⁶⁴) would count as no one.
    mutating func prepare() async throws {
        let before = try await ClickHouseMigrations.Schema.read(client)
        if let columns = before.columns[Self.table] {
            if before.columns[Self.resentTable] == nil { try await markEarlierCopies() }
            if columns["person"] == nil {
                do {
                    try await client.execute(
                        "ALTER TABLE events ADD COLUMN person String ALIAS if(user_id != '', user_id, anonymous_id)")
                } catch {
                    // Another collector starting at the same time may have added it first.
                    let now = try await ClickHouseMigrations.Schema.read(client)
                    guard now.columns[Self.table]?["person"] != nil else { throw error }
                }
            }
        }
        try await ClickHouseMigrations.migrate(client)
        let after = try await ClickHouseMigrations.Schema.read(client)
        storedLegacyColumns = Set(LegacyColumn.allCases.filter { after.columns[Self.table]?[$0.rawValue] == "" })
    }

    /// Makes ``resentTable`` naming as resent every time of every message `events` holds more
    /// than one row of: the copies stored before resent messages were named, which the merges may
    /// not have folded yet (a retry's copy could then differ from the first by a few
    /// milliseconds). Run once, when ``resentTable`` is made beside an older `events`; it reads the
    /// whole table's ids (10 s for 10 M events on a 2-core machine), for up to an hour. The table is filled under another name and
    /// renamed, so a start that fails midway leaves no partial table, and the next start does it
    /// again; when another collector made it first, its table serves.
    func markEarlierCopies() async throws {
        let filling = "\(Self.resentTable)_filling_\(UInt32.random(in: 0...UInt32.max))"
        // Version 3's table (``ClickHouseMigrations``), under another name.
        try await client.execute(
            """
            CREATE TABLE \(identifier: filling) (source String, message_id String, time DateTime, time_ms UInt16)
            ENGINE = MergeTree PARTITION BY toYYYYMM(time) ORDER BY (source, message_id)
            """)
        client.logger.notice(
            "naming the copies of messages an older events table holds, once: this reads every message id",
            metadata: ["table": "\(Self.table)", "into": "\(Self.resentTable)"])
        do {
            try await client.execute(
                """
                INSERT INTO \(identifier: filling) (source, message_id, time, time_ms)
                SELECT DISTINCT source, message_id, time, time_ms FROM \(identifier: Self.table)
                WHERE (source, message_id) IN (
                    SELECT source, message_id FROM \(identifier: Self.table) GROUP BY source, message_id HAVING count() > 1
                )
                """, timeout: .seconds(3600))
            try await client.execute("RENAME TABLE \(identifier: filling) TO \(identifier: Self.resentTable)")
        } catch {
            try? await client.execute("DROP TABLE IF EXISTS \(identifier: filling)")
            let made = try await client.rows(
                """
                SELECT count() AS n FROM system.tables
                WHERE database = currentDatabase() AND name = \(Self.resentTable)
                """)
            guard made.first?["n"]?.intValue == 1 else { throw error }
        }
    }

    /// Stores `messages` of `source` in one insert, all or nothing, with those of the requests
    /// that arrive at the same time (``ClickHouseInsertQueue``). `resent` names the messages that
    /// may be in the table already (a retry's, sent as their first copy was stored): their ids are
    /// written to ``resentTable`` first, so reads deduplicate them (see the type's documentation).
    /// A message inserted twice without being named here would be counted twice.
    func insert(_ messages: [IngestMessage], resent: Set<String> = [], source: String) async throws {
        guard !messages.isEmpty else { return }
        let marks = messages.filter { resent.contains($0.messageId) }.map { message -> [String: JSONValue] in
            let (seconds, milliseconds) = Self.split(message.timestamp)
            return [
                "source": .string(source), "message_id": .string(message.messageId),
                "time": .int(Int(seconds)), "time_ms": .int(Int(milliseconds)),
            ]
        }
        if !marks.isEmpty { try await client.insert(into: Self.resentTable, rows: marks) }
        // One writer per row: a writer separates the values it writes with commas, and
        // `JSONEachRow` has none between rows.
        var lines: [UInt8] = []
        lines.reserveCapacity(messages.count * 512)
        var writer = JSONWriter(capacity: 1024)
        for message in messages {
            writer.reset()
            writer.beginObject()
            writer.key("source")
            writer.string(source)
            writer.key("event")
            writer.string(message.name ?? "")
            writer.key("type")
            writer.string(message.type.rawValue)
            writer.key("message_id")
            writer.string(message.messageId)
            let (seconds, milliseconds) = Self.split(message.timestamp)
            writer.key("time")
            writer.int(Int(seconds))
            writer.key("time_ms")
            writer.int(Int(milliseconds))
            writer.key("user_id")
            writer.string(message.userId ?? "")
            writer.key("anonymous_id")
            writer.string(message.anonymousId ?? "")
            if storedLegacyColumns.contains(.person) {
                writer.key("person")
                writer.string(message.userId ?? message.anonymousId ?? "")
            }
            writer.key("session_id")
            writer.string(message.sessionId ?? "")
            let properties = PropertyColumns(payload: message.payload, json: storedLegacyColumns.contains(.properties))
            if let json = properties.json {
                writer.key("properties")
                writer.string(json)
            }
            properties.write(to: &writer)
            writer.key("received_at")
            writer.int(Int(Self.split(message.receivedAt).seconds))
            writer.key("payload")
            writer.string(message.payload)
            writer.key("version")
            writer.int(Int(Self.versionBase - max(0, min(message.receivedAt, Self.versionBase))))
            writer.endObject()
            lines += writer.bytes
            lines.append(UInt8(ascii: "\n"))
        }
        try await queue.insert(lines)
    }

    /// How many distinct events `source` has.
    func count(source: String) async throws -> Int {
        let rows = try await client.rows(
            "SELECT count() AS n FROM (\(Self.select("message_id", source: source, where: [])))")
        return rows.first?["n"]?.intValue ?? 0
    }

    // MARK: Operations

    /// Drops the monthly partitions that end on or before `instant` (milliseconds since 1970,
    /// UTC): whole months, every source's, in one metadata operation each; the events' first, then
    /// the resent ids' (so no read finds a month's copies without their ids).
    /// - Returns: the months dropped, as `yyyymm`.
    @discardableResult
    func dropMonths(endingBy instant: Int64) async throws -> [Int] {
        let limit = Self.firstMonthKept(endingBy: instant)
        var dropped: Set<Int> = []
        for table in [Self.table, Self.resentTable] {
            let rows = try await client.rows(
                """
                SELECT DISTINCT partition FROM system.parts
                WHERE database = currentDatabase() AND table = \(table) AND active
                """)
            let months = rows.compactMap { $0["partition"]?.stringValue.flatMap { Int($0) } }.filter { $0 < limit }
            for month in months.sorted() {
                try await client.execute("ALTER TABLE \(identifier: table) DROP PARTITION \(month)")
            }
            dropped.formUnion(months)
        }
        return dropped.sorted()
    }

    /// Hides `source`'s events before `instant` (ms) from every read of the insights
    /// (``ClickHouseInsights``), as retention deletes them from the SQL store. Partitions hold
    /// every source's events of a month, and a mutation would rewrite them each time the cut moves
    /// by a day; so the rows stay until their month is dropped (``dropMonths(endingBy:)``) while
    /// reads skip them. A cut never moves back.
    func cut(source: String, before instant: Int64) async throws {
        try await client.insert(
            into: "retention_cuts", rows: [["source": .string(source), "before": .int(Int(instant))]])
    }

    /// The condition that skips `source`'s events its retention cut hides (`ts` is the event's
    /// time in ms).
    static func afterCut(of source: String) -> ClickHouseSQL {
        "ts >= (SELECT max(before) FROM retention_cuts WHERE source = \(source))"
    }

    /// The month (`yyyymm`, UTC) that holds `instant`: the first one kept, since a month is
    /// dropped only when all of it is before `instant`.
    static func firstMonthKept(endingBy instant: Int64) -> Int {
        let days = instant >= 0 ? instant / 86_400_000 : (instant - 86_399_999) / 86_400_000
        let date = Timestamp.civilDate(fromDays: Int(days))
        return date.year * 100 + date.month
    }

    /// Deletes every event of `source` by the given ids (a user's deletion), and the alias calls
    /// that named one of them as their `previousId`: a mutation, which ClickHouse applies in the
    /// background; this waits until it is done, so the events are gone when it returns.
    func delete(source: String, userIds: [String], anonymousIds: [String]) async throws {
        guard !userIds.isEmpty || !anonymousIds.isEmpty else { return }
        var conditions: [ClickHouseSQL] = []
        if !userIds.isEmpty { conditions.append("user_id IN (\(list: userIds))") }
        if !anonymousIds.isEmpty { conditions.append("anonymous_id IN (\(list: anonymousIds))") }
        let everyId = Array(Set(userIds + anonymousIds)).sorted()
        conditions.append("(type = 'alias' AND visitParamExtractString(payload, 'previousId') IN (\(list: everyId)))")
        try await client.execute(
            """
            ALTER TABLE \(identifier: Self.table) DELETE
            WHERE source = \(source) AND (\(conditions.joined(separator: " OR ")))
            """)
        try await waitForMutations()
    }

    /// Returns when no mutation of the table is left to apply.
    /// - Throws: ``StorageError`` `unavailable` when some are still pending after the client's
    ///   timeout (the deletion is recorded; ClickHouse goes on applying it).
    func waitForMutations(pollInterval: Duration = .milliseconds(50)) async throws {
        let deadline = ContinuousClock.now + client.timeout
        while true {
            let rows = try await client.rows(
                """
                SELECT count() AS pending FROM system.mutations
                WHERE database = currentDatabase() AND table = 'events' AND is_done = 0
                """)
            guard let pending = rows.first?["pending"]?.intValue, pending > 0 else { return }
            guard ContinuousClock.now < deadline else {
                throw StorageError(
                    code: .unavailable,
                    message:
                        "ClickHouse at \(client.url) has \(pending) deletions of events not yet applied after \(client.timeout)"
                )
            }
            try await Task.sleep(for: pollInterval)
        }
    }

    // MARK: Values

    /// The base `version` counts down from: later copies of a message get smaller versions, so a
    /// `ReplacingMergeTree` keeps the first.
    static let versionBase: Int64 = 1 << 52

    /// Milliseconds since 1970 as whole seconds and the milliseconds past them (both non-negative
    /// for instants before 1970 too: the second rounds down).
    static func split(_ milliseconds: Int64) -> (seconds: Int64, milliseconds: Int64) {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        return (max(0, seconds), milliseconds - seconds * 1000)
    }

}

/// A message's properties as the `events` table keeps them: each top-level member that is not
/// `null` in four arrays of the same order, which the insights read as the SQL stores read a
/// property (``SQLDialect/analyticsPropertyText(_:)``): its name (`property_keys`), its text
/// (`property_texts`: a string as it is, `true`/`false`, a number as written back from its
/// value, an object or array as compact JSON), its value as a number (`property_numbers`, 0 when
/// not a number) and whether it is one (`property_numeric`). A member read with
/// `visitParamExtract*` would be found at any depth; these hold the top level only.
struct PropertyColumns: Equatable {
    /// The properties as compact JSON (`{}` when there are none), only when asked for: a table
    /// made before it was dropped stores it (``ClickHouseEvents/LegacyColumn/properties``).
    var json: String?
    var keys: [String] = []
    var texts: [String] = []
    var numbers: [Double] = []
    var numeric: [Bool] = []

    init(payload: String, json: Bool = false) {
        if json { self.json = "{}" }
        guard case .object(let members)? = try? JSONParser.parse(payload),
            case .object(let properties)? = members["properties"]
        else { return }
        if json {
            var writer = JSONWriter()
            writer.value(.object(properties))
            self.json = String(decoding: writer.bytes, as: UTF8.self)
        }
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            let text: String
            var number: Double?
            switch value {
            case .null: continue
            case .string(let string): text = string
            case .bool(let flag): text = flag ? "true" : "false"
            case .int(let integer):
                text = String(integer)
                number = Double(integer)
            case .double(let double):
                text = String(double)
                number = double
            case .array, .object:
                var member = JSONWriter()
                member.value(value)
                text = String(decoding: member.bytes, as: UTF8.self)
            }
            keys.append(key)
            texts.append(text)
            numbers.append(number ?? 0)
            numeric.append(number != nil)
        }
    }

    /// Writes the four arrays as members of the row `writer` is writing.
    func write(to writer: inout JSONWriter) {
        writer.key("property_keys")
        writer.value(.array(keys.map(JSONValue.string)))
        writer.key("property_texts")
        writer.value(.array(texts.map(JSONValue.string)))
        writer.key("property_numbers")
        writer.value(.array(numbers.map { $0.isFinite ? JSONValue.double($0) : .int(0) }))
        writer.key("property_numeric")
        writer.value(.array(numeric.map { .int($0 ? 1 : 0) }))
    }
}
