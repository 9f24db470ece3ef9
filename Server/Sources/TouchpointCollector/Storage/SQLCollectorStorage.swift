import Foundation
import Logging
import TouchpointCore

/// The storage logic, written once over an ``SQLBackend`` (SQLite or PostgreSQL) and the
/// database's ``EventWriter``.
///
/// Ingest goes to the writer, which each database brings (``SQLiteEventWriter``,
/// ``PostgresEventWriter``); every other read and write is SQL that both databases run, built
/// with ``SQLStatement`` and worded by ``SQLDialect`` where they differ. Opened by
/// ``sqlite(path:logger:tuning:)`` or ``postgres(url:maximumConnections:logger:)``.
final class SQLCollectorStorage: CollectorStorage {
    let backend: any SQLBackend
    /// How ingest stores events in this database.
    let writer: any EventWriter
    var dialect: SQLDialect { backend.dialect }
    var backendName: String { backend.dialect.rawValue }

    private init(backend: any SQLBackend, writer: any EventWriter) {
        self.backend = backend
        self.writer = writer
    }

    /// Brings the schema up to date and opens the event writer; closes the backend when either
    /// fails.
    static func migrated<Backend: SQLBackend>(
        _ backend: Backend, logger: Logger, writer: (Backend) async throws -> any EventWriter
    ) async throws -> SQLCollectorStorage {
        do {
            try await SchemaMigrations.migrate(backend, logger: logger)
            return SQLCollectorStorage(backend: backend, writer: try await writer(backend))
        } catch {
            try? await backend.close()
            throw error
        }
    }

    func insert(_ messages: [IngestMessage], source: String) async throws -> [Bool] {
        try await writer.insert(messages, source: source)
    }

    func writerMetrics() -> String { writer.metrics() }

    func ping() async throws {
        _ = try await backend.query("SELECT 1", [])
    }

    func schemaVersion() async throws -> Int {
        let rows = try await backend.query("SELECT MAX(version) FROM schema_migrations", [])
        return Int(rows.first?.first?.int ?? 0)
    }

    func close() async throws {
        await writer.close()
        try await backend.close()
    }

    // MARK: Shared row decoding

    /// The columns of an event as read back: its row's, then its shared context (``SharedContexts``).
    static let eventColumns =
        "seq, message_id, type, event, user_id, anonymous_id, session_id, timestamp, original_timestamp, sent_at, received_at, payload, lifted, \(SharedContexts.column)"

    static func event(from row: SQLRow) throws -> StoredEvent {
        guard row.count == 14, let sequence = row[0].int, let messageId = row[1].text, let type = row[2].text,
            let timestamp = row[7].int, let receivedAt = row[10].int
        else { throw StorageError(code: .corruptRow, message: "an events row does not have the expected columns") }
        let payload = try message(from: row)
        let message = (try? JSONParser.parse(payload)) ?? .string(payload)
        return StoredEvent(
            sequence: sequence, messageId: messageId, type: type, name: row[3].text, userId: row[4].text,
            anonymousId: row[5].text, sessionId: row[6].text, timestamp: Timestamp.date(milliseconds: timestamp),
            originalTimestamp: originalTimestamp(of: row), sentAt: row[9].int.map(Timestamp.date(milliseconds:)),
            receivedAt: Timestamp.date(milliseconds: receivedAt),
            message: message)
    }

    /// The message of a row of ``eventColumns`` as it was received: its stored payload with the
    /// members its columns hold put back (``StoredPayload``).
    static func message(from row: SQLRow) throws -> String {
        guard row.count == 14, let messageId = row[1].text, let type = row[2].text, let payload = row[11].text else {
            throw StorageError(code: .corruptRow, message: "an events row does not have the expected columns")
        }
        let lifted = StoredPayload.Lifted(rawValue: row[12].int ?? 0)
        let shared = row[13].text
        if lifted.contains(.context), shared == nil {
            throw StorageError(
                code: .corruptRow,
                message:
                    "event \(row[0].int.map(String.init) ?? "?") keeps its context in the contexts table, which has no row for it: the database was changed outside the collector; restore it from a backup"
            )
        }
        return StoredPayload.restore(
            payload, lifted: lifted,
            columns: StoredPayload.Columns(
                messageId: messageId, type: type, name: row[3].text, userId: row[4].text, anonymousId: row[5].text,
                originalTimestamp: originalTimestamp(of: row), sessionId: row[6].text),
            sharedContext: shared)
    }

    /// The original timestamp of a row of ``eventColumns``: its column, or the text its times give
    /// back when SQLite left the column empty (``StoredPayload/Lifted/derivedTime``).
    static func originalTimestamp(of row: SQLRow) -> String? {
        if let text = row[8].text { return text }
        guard StoredPayload.Lifted(rawValue: row[12].int ?? 0).contains(.derivedTime), let timestamp = row[7].int,
            let receivedAt = row[10].int
        else { return nil }
        return StoredPayload.derivedOriginalTimestamp(timestamp: timestamp, sentAt: row[9].int, receivedAt: receivedAt)
    }

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
