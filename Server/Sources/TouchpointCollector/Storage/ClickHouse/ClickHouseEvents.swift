import Foundation
import TouchpointCore

/// The `events` table kept in ClickHouse for the insights, and what ingest and operations do to it.
///
/// **The table.** One row per stored copy of a message: `DateTime` (seconds, UTC) plus a
/// milliseconds column, since ClickHouse 18.16 has no `DateTime64`; the event's properties as JSON
/// text (read with `visitParamExtract*`, which both 18.16 and current releases have); the person
/// as the message carries it (`user_id`, else `anonymous_id`). Partitioned by month
/// (`toYYYYMM(time)`), so retention drops whole partitions.
///
/// **Deduplication.** A `ReplacingMergeTree` whose sorting key ends in the message id:
/// `(source, event, toDate(time), message_id)`. A re-sent message has the same source, event,
/// message id and day (its time is corrected for clock skew from the same `timestamp` and
/// `sentAt` pair, so it moves by the network delay only), so its copies share one key and
/// ClickHouse's merges keep one of them, the first received (`version` falls as `received_at`
/// grows). Until a merge runs both copies are on disk: every read goes through ``deduplicated``
/// (`FINAL`), never the bare table.
struct ClickHouseEvents: Sendable {
    let client: ClickHouseClient
    /// Ingest's inserts, gathered across concurrent requests.
    let queue: ClickHouseInsertQueue

    init(client: ClickHouseClient) {
        self.client = client
        queue = ClickHouseInsertQueue { [client] lines in
            try await client.insert(into: ClickHouseEvents.table, jsonLines: lines)
        }
    }

    /// The table's name in the client's database.
    static let table = "events"

    /// The table read without copies of one message: what every query reads from.
    static let deduplicated = "events FINAL"

    /// The table, created when missing (ClickHouse's tables are this type's, not ``SchemaMigrations``').
    static let createStatement = """
        CREATE TABLE IF NOT EXISTS events (
            source String,
            event String,
            type String,
            message_id String,
            time DateTime,
            time_ms UInt16,
            user_id String,
            anonymous_id String,
            person String,
            session_id String,
            properties String,
            received_at DateTime,
            payload String,
            version UInt64
        ) ENGINE = ReplacingMergeTree(version)
        PARTITION BY toYYYYMM(time)
        ORDER BY (source, event, toDate(time), message_id)
        """

    /// Creates the table if it is missing.
    func prepare() async throws {
        try await client.execute(Self.createStatement)
    }

    /// Stores `messages` of `source` in one insert, all or nothing, with those of the requests
    /// that arrive at the same time (``ClickHouseInsertQueue``). Copies of a message already
    /// stored (a retry) are written again and collapse into one (see the type's documentation), so
    /// a request may be inserted as often as it is retried.
    func insert(_ messages: [IngestMessage], source: String) async throws {
        guard !messages.isEmpty else { return }
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
            writer.key("person")
            writer.string(message.userId ?? message.anonymousId ?? "")
            writer.key("session_id")
            writer.string(message.sessionId ?? "")
            writer.key("properties")
            writer.string(Self.properties(ofPayload: message.payload))
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
            "SELECT count() AS n FROM \(Self.deduplicated) WHERE source = \(ClickHouseClient.literal(source))")
        return rows.first?["n"]?.intValue ?? 0
    }

    // MARK: Operations

    /// Drops the monthly partitions that end on or before `instant` (milliseconds since 1970,
    /// UTC): whole months, every source's, in one metadata operation each.
    /// - Returns: the partitions dropped, as `yyyymm`.
    @discardableResult
    func dropMonths(endingBy instant: Int64) async throws -> [Int] {
        let rows = try await client.rows(
            """
            SELECT DISTINCT partition FROM system.parts
            WHERE database = currentDatabase() AND table = 'events' AND active
            """)
        let limit = Self.firstMonthKept(endingBy: instant)
        let months = rows.compactMap { $0["partition"]?.stringValue.flatMap { Int($0) } }.filter { $0 < limit }.sorted()
        for month in months {
            try await client.execute("ALTER TABLE \(Self.table) DROP PARTITION \(month)")
        }
        return months
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
        func list(_ ids: [String]) -> String { ids.map(ClickHouseClient.literal).joined(separator: ", ") }
        var conditions: [String] = []
        if !userIds.isEmpty { conditions.append("user_id IN (\(list(userIds)))") }
        if !anonymousIds.isEmpty { conditions.append("anonymous_id IN (\(list(anonymousIds)))") }
        let everyId = Array(Set(userIds + anonymousIds)).sorted()
        conditions.append("(type = 'alias' AND visitParamExtractString(payload, 'previousId') IN (\(list(everyId))))")
        try await client.execute(
            """
            ALTER TABLE \(Self.table) DELETE
            WHERE source = \(ClickHouseClient.literal(source)) AND (\(conditions.joined(separator: " OR ")))
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

    /// The `properties` object of a stored payload as compact JSON, `{}` when it has none.
    static func properties(ofPayload payload: String) -> String {
        guard case .object(let members)? = try? JSONParser.parse(payload),
            case .object(let properties)? = members["properties"]
        else { return "{}" }
        var writer = JSONWriter()
        writer.value(.object(properties))
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
