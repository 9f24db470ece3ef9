import Foundation
import Logging
import TouchpointCore

/// The storage logic, written once over a ``SQLBackend`` (SQLite or PostgreSQL).
final class SQLCollectorStorage: CollectorStorage {
    let backend: any SQLBackend
    var dialect: SQLDialect { backend.dialect }
    var backendName: String { backend.dialect.rawValue }
    /// How ingest stores rows, settled when the storage opens.
    let ingest: IngestPath
    /// PostgreSQL ingest writes so far (the counts are folded every ``SourceCounts/foldEvery``).
    let writes = Locked(0)

    enum IngestPath {
        /// SQLite has one writer: requests waiting for it are written together (group commit),
        /// deduplicated through the keys of ``MessageKeyIndex``, their sessions added to the rows
        /// ``SessionRows`` remembers.
        case groupCommit(GroupCommit)
        /// PostgreSQL writes each request on its own, in parallel on several connections.
        case postgres(PostgresBackend)
    }

    /// What SQLite's writer keeps between writes.
    struct GroupCommit {
        /// The database, for the sessions and keys looked up on a reader before a write.
        var backend: SQLiteBackend
        /// Whether a reader looks sessions and keys up before a write (``lookAhead(_:)``; tests
        /// turn it off to reach the writer's own lookups).
        var looksAhead: Bool
        var coalescer: InsertCoalescer
        var keys: MessageKeyIndex
        var sessionRows: SessionRows
        var people: PersonKeyCache
        var contexts: SharedContexts
        var steps: WriterSteps
    }

    /// SQLite's writer and what it keeps (nil for PostgreSQL).
    var groupCommit: GroupCommit? {
        guard case .groupCommit(let writer) = ingest else { return nil }
        return writer
    }

    /// SQLite's message keys (nil for PostgreSQL).
    var messageKeys: MessageKeyIndex? { groupCommit?.keys }

    /// SQLite's writer's sessions (nil for PostgreSQL).
    var sessionRows: SessionRows? { groupCommit?.sessionRows }

    /// SQLite's keys of sessions (nil for PostgreSQL).
    var sessionKeys: SessionKeys? { groupCommit?.sessionRows.keys }

    /// SQLite's writer's memory of people's numbers (nil for PostgreSQL).
    var personKeyCache: PersonKeyCache? { groupCommit?.people }

    /// SQLite's writer's shared contexts (nil for PostgreSQL).
    var sharedContexts: SharedContexts? { groupCommit?.contexts }

    /// Where SQLite's writer spends its time (nil for PostgreSQL, whose writes run in parallel).
    var writerSteps: WriterSteps? { groupCommit?.steps }

    private init(backend: any SQLBackend, ingest: IngestPath) {
        self.backend = backend
        self.ingest = ingest
    }

    /// Opens the SQLite database file at `path` (creating it) and brings its schema up to date.
    /// - Parameters:
    ///   - minimumMerge: message keys held in memory before they are merged, at least
    ///     (``MessageKeyIndex``; tests make it small).
    ///   - maximumMerge: the most message keys one merge takes (tests make it small).
    ///   - keyOverride: for tests, a message key function in place of the database's.
    ///   - freeSlice: message keys freed from memory per hold of the lock after a merge (tests
    ///     make it small).
    ///   - mergeAtStart: whether a store that holds message keys builds their filter (when none was
    ///     saved for it) and merges a due backlog as soon as it opens, rather than at its first
    ///     write (tests that look at the state a start leaves turn it off).
    ///   - flush: for tests, what flushes the WAL in place of `fsync` (``WALSync``).
    ///   - sessionsLookedUpAhead: whether a reader looks up a request's sessions before its write
    ///     (``GroupCommit/lookAhead(_:)``; tests turn it off to reach the writer's own lookups).
    ///   - sessionMerge: session keys held in memory before they are merged, at least, and the
    ///     most one merge takes (``SessionKeys``; tests make them small).
    static func sqlite(
        path: String, logger: Logger, minimumMerge: Int = 250_000, maximumMerge: Int = 4_000_000,
        keyOverride: MessageKeyIndex.KeyFunction? = nil, freeSlice: Int = 16_384, mergeAtStart: Bool = true,
        flush: WALSync.Flush? = nil, sessionsLookedUpAhead: Bool = true,
        sessionMerge: (minimum: Int, maximum: Int) = (50_000, 1_000_000)
    ) async throws -> SQLCollectorStorage {
        let backend = try await SQLiteBackend.open(path: path, logger: logger, flush: flush)
        let storage = try await migrated(backend, logger: logger) { backend in
            let (keys, sessionKeys) = try await backend.writeNow { connection in
                let keys = try MessageKeyIndex.load(
                    connection, minimumMerge: minimumMerge, maximumMerge: maximumMerge, keyOverride: keyOverride,
                    freeSlice: freeSlice, filterFile: path + Self.keyFilterSuffix, logger: logger)
                let sessionKeys = try SessionKeys.load(
                    connection, key: keys.key, minimumMerge: sessionMerge.minimum, maximumMerge: sessionMerge.maximum)
                return (keys, sessionKeys)
            }
            let contexts = SharedContexts()
            let sessionRows = SessionRows(keys: sessionKeys)
            let people = PersonKeyCache()
            let steps = WriterSteps()
            let coalescer = InsertCoalescer(maximumRows: 5000) { rows in
                let written = try await Self.write(
                    rows, sqlite: backend, keys: keys, contexts: contexts, sessionRows: sessionRows, people: people,
                    steps: steps)
                keys.mergeIfDue(into: backend, logger: logger)
                sessionKeys.mergeIfDue(into: backend, logger: logger)
                return (written.stored, written.ticket.whenDurable)
            }
            // Not left to the first write: after a crash the filter is to be built (ingest reads
            // the table for every new key until it is), and a backlog may be due.
            if mergeAtStart, keys.mergedThrough > 0 || keys.keysInMemory > 0 {
                keys.mergeIfDue(into: backend, logger: logger)
            }
            if mergeAtStart { sessionKeys.mergeIfDue(into: backend, logger: logger) }
            return .groupCommit(
                GroupCommit(
                    backend: backend, looksAhead: sessionsLookedUpAhead, coalescer: coalescer, keys: keys,
                    sessionRows: sessionRows, people: people, contexts: contexts,
                    steps: steps))
        }
        return storage
    }

    /// Appended to the database file's path: where the filter over its message keys is saved for
    /// the next start (``MessageKeyIndex/saveFilter()``).
    static let keyFilterSuffix = "-keyfilter"

    /// Connects to PostgreSQL at `url` and brings its schema up to date.
    static func postgres(url: String, maximumConnections: Int = 8, logger: Logger) async throws
        -> SQLCollectorStorage
    {
        let backend = try await PostgresBackend.open(url: url, maximumConnections: maximumConnections, logger: logger)
        return try await migrated(backend, logger: logger) { .postgres($0) }
    }

    /// Brings the schema up to date and sets up ingest; closes the backend when either fails.
    private static func migrated<Backend: SQLBackend>(
        _ backend: Backend, logger: Logger, ingest: (Backend) async throws -> IngestPath
    ) async throws -> SQLCollectorStorage {
        do {
            try await SchemaMigrations.migrate(backend, logger: logger)
            return SQLCollectorStorage(backend: backend, ingest: try await ingest(backend))
        } catch {
            try? await backend.close()
            throw error
        }
    }

    func ping() async throws {
        _ = try await backend.query("SELECT 1", [])
    }

    func schemaVersion() async throws -> Int {
        let rows = try await backend.query("SELECT MAX(version) FROM schema_migrations", [])
        return Int(rows.first?.first?.int ?? 0)
    }

    func close() async throws {
        if let keys = messageKeys {
            await keys.stopMerging()
            await keys.saveFilter()
        }
        await sessionKeys?.stopMerging()
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
