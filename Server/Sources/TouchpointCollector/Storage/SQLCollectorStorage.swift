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
    /// Where each source's days begin, for the writer's daily people (``DailyPeopleRollup``).
    let calendars: SourceCalendars
    /// Builds the daily people of stored events in the background.
    let backfill: DailyPeopleBackfill
    var dialect: SQLDialect { backend.dialect }
    var backendName: String { backend.dialect.rawValue }

    private init(backend: any SQLBackend, writer: any EventWriter, calendars: SourceCalendars, logger: Logger) {
        self.backend = backend
        self.writer = writer
        self.calendars = calendars
        backfill = DailyPeopleBackfill(backend: backend, calendars: calendars, logger: logger)
    }

    /// Brings the schema up to date and opens the event writer; closes the backend when either
    /// fails.
    static func migrated<Backend: SQLBackend>(
        _ backend: Backend, logger: Logger, writer: (Backend, SourceCalendars) async throws -> any EventWriter
    ) async throws -> SQLCollectorStorage {
        do {
            try await SchemaMigrations.migrate(backend, logger: logger)
            let calendars = SourceCalendars()
            return SQLCollectorStorage(
                backend: backend, writer: try await writer(backend, calendars), calendars: calendars, logger: logger)
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
        await backfill.stop()
        await writer.close()
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
