import Foundation
import Logging
import TouchpointCore

/// The storage logic, written once over an ``SQLBackend`` (SQLite or PostgreSQL), the database's
/// ``EventWriter`` and the ``InsightEngine`` of the store that holds the events.
///
/// Ingest goes to the writer, which each database brings (``SQLiteEventWriter``,
/// ``PostgresEventWriter``); the insights that read events go to the engine chosen when the
/// storage opens (``SQLiteInsights``, ``PostgresInsights``, or ``ClickHouseInsightEngine`` with
/// `--events`); every other read and write is SQL that both databases run, built with
/// ``SQLStatement`` and worded by ``SQLDialect`` where they differ. Opened by
/// ``sqlite(path:logger:tuning:)`` or ``postgres(url:maximumConnections:clickHouse:logger:)``.
final class SQLCollectorStorage: CollectorStorage {
    let backend: any SQLBackend
    /// How ingest stores events in this database.
    let writer: any EventWriter
    /// Where each source's days begin, for the writer's daily people (``DailyPeopleRollup``).
    let calendars: SourceCalendars
    /// Builds the daily people of stored events in the background.
    let backfill: DailyPeopleBackfill
    /// Where events are kept as well, for the insights (`--events clickhouse://…`), when they are.
    let clickHouse: ClickHouseEvents?
    /// The events per minute (``EventMinutes``), read by the engine and the overview.
    let eventMinutes: EventMinutesReader
    /// What answers the insights that read events, chosen once, when the storage opens.
    let insights: any InsightEngine
    var dialect: SQLDialect { backend.dialect }
    var backendName: String { backend.dialect.rawValue }

    private init(
        backend: any SQLBackend, writer: any EventWriter, calendars: SourceCalendars, clickHouse: ClickHouseEvents?,
        eventMinutes: EventMinutesReader, insights: any InsightEngine, logger: Logger
    ) {
        self.backend = backend
        self.writer = writer
        self.calendars = calendars
        self.clickHouse = clickHouse
        self.eventMinutes = eventMinutes
        self.insights = insights
        backfill = DailyPeopleBackfill(backend: backend, calendars: calendars, logger: logger)
    }

    /// Brings the schema up to date, opens the event writer and creates ClickHouse's table when
    /// `clickHouse` is given; closes the backend and the client when any fails. The insights are
    /// answered by ClickHouse's engine over the database's (`insights`) when it is given, else by
    /// the database's.
    static func migrated<Backend: SQLBackend>(
        _ backend: Backend, clickHouse: ClickHouseEvents? = nil, logger: Logger,
        insights: (Backend, EventMinutesReader) -> any SQLInsightEngine,
        writer: (Backend, SourceCalendars) async throws -> any EventWriter
    ) async throws -> SQLCollectorStorage {
        do {
            try await SchemaMigrations.migrate(backend, logger: logger)
            var clickHouse = clickHouse
            try await clickHouse?.prepare()
            let calendars = SourceCalendars()
            let eventMinutes = EventMinutesReader(backend: backend)
            let database = insights(backend, eventMinutes)
            let engine: any InsightEngine =
                clickHouse.map { ClickHouseInsightEngine(events: $0, sql: database) } ?? database
            return SQLCollectorStorage(
                backend: backend, writer: try await writer(backend, calendars), calendars: calendars,
                clickHouse: clickHouse, eventMinutes: eventMinutes, insights: engine, logger: logger)
        } catch {
            try? await backend.close()
            await clickHouse?.client.close()
            throw error
        }
    }

    func insert(_ messages: [IngestMessage], source: String) async throws -> [Bool] {
        let stored = try await writer.insert(messages, source: source)
        // After the database's commit, every message of the request goes to ClickHouse, also those
        // the database already had: an earlier copy may have been committed there while its
        // ClickHouse insert failed. Those are named as resent, so reads count them once
        // (``ClickHouseEvents``). A failure throws, so the request is answered 503 and its retry
        // completes the copy.
        if let clickHouse {
            let resent = Set(zip(messages, stored).filter { !$0.1 }.map(\.0.messageId))
            try await clickHouse.insert(
                try await storedCopies(messages, stored: stored, source: source), resent: resent, source: source)
        }
        return stored
    }

    /// The messages of a request as ClickHouse gets them: each one stored now as sent, each one
    /// the database had already as the database keeps it (its first copy: its name, time and
    /// payload), so every copy ClickHouse gets of a message is the same row and collapses with the
    /// others, even when a client sent the id again with another event or day; one the database
    /// does not hold is left out. Only a request with repeats reads the database (by the unique
    /// index of source and message id).
    func storedCopies(_ messages: [IngestMessage], stored: [Bool], source: String) async throws -> [IngestMessage] {
        let repeated = Set(zip(messages, stored).filter { !$0.1 }.map(\.0.messageId))
        guard !repeated.isEmpty else { return messages }
        var statement = SQLStatement(dialect, "SELECT \(EventsTable.selectList) FROM events WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND message_id IN ")
        statement.bindTuple(repeated.sorted().map { .text($0) })
        var kept: [String: IngestMessage] = [:]
        for row in try await backend.query(statement) {
            let event = try StoredEventRow(row)
            guard let type = MessageType(rawValue: event.type) else { continue }
            kept[event.messageId] = IngestMessage(
                messageId: event.messageId, type: type, name: event.name, userId: event.userId,
                anonymousId: event.anonymousId, sessionId: event.sessionId, timestamp: event.timestamp,
                originalTimestamp: nil, sentAt: event.sentAt, receivedAt: event.receivedAt, payload: try event.message()
            )
        }
        return zip(messages, stored).compactMap { message, isNew in isNew ? message : kept[message.messageId] }
    }

    func writerMetrics() -> String { writer.metrics() }

    func ping() async throws {
        _ = try await backend.query("SELECT 1", [])
    }

    func pingEventStore() async throws {
        try await clickHouse?.client.ping()
    }

    func dropEventStoreMonths(endingBy instant: Int64) async throws {
        try await clickHouse?.dropMonths(endingBy: instant)
    }

    func cutEventStore(source: String, before instant: Int64) async throws {
        try await clickHouse?.cut(source: source, before: instant)
    }

    func schemaVersion() async throws -> Int {
        let rows = try await backend.query("SELECT MAX(version) FROM schema_migrations", [])
        return Int(rows.first?.first?.int ?? 0)
    }

    func close() async throws {
        await backfill.stop()
        await writer.close()
        await clickHouse?.client.close()
        try await backend.close()
    }

    // MARK: Paging

    /// A keyset cursor `<a>:<b>` of two integers, or nil for the first page.
    static func integerCursor(_ cursor: String?) throws -> (Int64, Int64)? {
        guard let cursor else { return nil }
        let parts = cursor.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let first = Int64(parts[0]), let second = Int64(parts[1]) else {
            throw foreignCursor(cursor)
        }
        return (first, second)
    }

    /// The error for a cursor this list did not hand out.
    static func foreignCursor(_ cursor: String) -> StorageError {
        StorageError(code: .invalidCursor, message: "\"\(cursor)\" was not handed out by this list")
    }

    /// Splits `limit + 1` fetched rows into a page and the cursor after its last item.
    static func page<Item>(_ items: [Item], limit: Int, cursor: (Item) -> String) -> Page<Item> {
        guard items.count > limit else { return Page(items: items, nextCursor: nil) }
        let kept = Array(items.prefix(limit))
        return Page(items: kept, nextCursor: kept.last.map(cursor))
    }
}
