import TouchpointCore
// sqlite-nio's bundled SQLite build (its C target, with every symbol prefixed `sqlite_nio_`):
// nothing to install on the machine, and one copy of SQLite in the process.
import VaporCSQLite

/// One SQLite connection, driven directly through SQLite's C API: blocking calls, made on a
/// thread that may block (``SQLiteBackend`` gives each connection a thread of its own).
///
/// Prepared statements are kept and reused by their SQL text: the ingest path runs one small
/// statement per row instead of preparing a multi-row statement for every write (preparing and
/// binding were 30 % of the writer thread's time through sqlite-nio, which prepares anew each time).
///
/// Opened in SQLite's serialized mode, so calls from several threads are safe; a statement taken
/// from the cache belongs to its caller until it is put back, so two callers never share one.
final class SQLiteConnection: @unchecked Sendable {
    // @unchecked: `handle` is used only through SQLite's serialized (FULLMUTEX) API, and the
    // idle statements only under their lock.
    private let handle: OpaquePointer
    /// Prepared statements not in use; nil once the connection is closed.
    private let idle = Locked<IdleStatements?>(IdleStatements())

    /// How many prepared statements a connection keeps for reuse: the least recently used one goes
    /// when a new one is put back. (Without that, the statements a new database's migrations run
    /// on the writer filled the cache for good, and every write prepared each of its own again: a
    /// twentieth of the writer's time.)
    static let cachedStatements = 64

    /// The path of the main database's write-ahead log file as SQLite names it (beside the file
    /// the database's path leads to, symbolic links followed); nil for an in-memory database.
    var walPath: String? {
        guard let database = sqlite_nio_sqlite3_db_filename(handle, "main"), database.pointee != 0,
            let wal = sqlite_nio_sqlite3_filename_wal(database)
        else { return nil }
        return String(cString: wal)
    }

    /// Statements prepared on this connection so far (for tests: is one reused?).
    var statementsPrepared: Int { idle.withLock { $0?.prepared ?? 0 } }

    /// The prepared statements not in use, by SQL text, each with when it was last put back.
    private struct IdleStatements {
        var statements: [String: (pointer: OpaquePointer, used: UInt64)] = [:]
        /// Counts the statements put back: the smallest `used` is the least recently used.
        var clock: UInt64 = 0
        var prepared = 0

        /// Keeps `pointer` for `sql`.
        /// - Returns: the statement to finalize: `pointer` itself when another for `sql` is kept
        ///   already, else the least recently used one when the cache is full, else nil.
        mutating func keep(_ pointer: OpaquePointer, for sql: String) -> OpaquePointer? {
            guard statements[sql] == nil else { return pointer }
            var evicted: OpaquePointer?
            if statements.count >= SQLiteConnection.cachedStatements,
                let oldest = statements.min(by: { $0.value.used < $1.value.used })
            {
                evicted = oldest.value.pointer
                statements[oldest.key] = nil
            }
            clock += 1
            statements[sql] = (pointer, clock)
            return evicted
        }
    }

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    /// Opens (creating when absent) the database file at `path`.
    static func open(path: String) throws -> SQLiteConnection {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { sqlite_nio_sqlite3_close_v2(handle) }
            throw StorageError(code: .unavailable, message: "cannot open the SQLite database \(path): \(message)")
        }
        sqlite_nio_sqlite3_extended_result_codes(handle, 1)
        registerFunctions(handle)
        return SQLiteConnection(handle: handle)
    }

    /// Makes `touchpoint_message_key(secret, source, message_id)` (``MessageKey``) callable in SQL
    /// on the connection: the migration that keys the stored events and the trigger that forgets a
    /// deleted event's key compute it where they run. The key of a packed id (``PackedID``) is that
    /// of its text. NULL when the secret is not 16 bytes.
    ///
    /// And `touchpoint_id(value)`: the text of a packed id, any other value as it is; and
    /// `touchpoint_packed_id(value)`, its reverse: a text that spells a UUID packed, any other value
    /// as it is (for migrations). And the aggregate `touchpoint_percentile(value, fraction)`
    /// (``SQLitePercentile``).
    ///
    /// And `touchpoint_bits_or(a, b)`: the union of two stored chunks of people
    /// (``PersonChunkEncoding``), how a write adds its people to a day's row of `daily_people` in
    /// place; an error for bytes that are not a chunk.
    private static func registerFunctions(_ handle: OpaquePointer) {
        SQLitePercentile.register(handle)
        sqlite_nio_sqlite3_create_function_v2(
            handle, "touchpoint_bits_or", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, arguments in
                guard count == 2, let arguments, let first = arguments[0], let second = arguments[1],
                    let union = PersonChunkEncoding.union(
                        SQLiteConnection.blobBytes(first), SQLiteConnection.blobBytes(second))
                else {
                    return sqlite_nio_sqlite3_result_error(context, "touchpoint_bits_or: not two chunks of people", -1)
                }
                union.withUnsafeBytes { bytes in
                    sqlite_nio_sqlite3_result_blob64(
                        context, bytes.baseAddress, UInt64(bytes.count), SQLiteStatement.transient)
                }
            }, nil, nil, nil)
        sqlite_nio_sqlite3_create_function_v2(
            handle, "touchpoint_message_key", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, arguments in
                guard count == 3, let arguments, let secret = arguments[0], let source = arguments[1],
                    let messageId = arguments[2]
                else { return sqlite_nio_sqlite3_result_null(context) }
                guard let key = MessageKey(secret: SQLiteConnection.blobBytes(secret)) else {
                    return sqlite_nio_sqlite3_result_null(context)
                }
                let sourceBytes = SQLiteConnection.textBytes(source)
                if sqlite_nio_sqlite3_value_type(messageId) == SQLITE_BLOB,
                    var unpacked = PackedID.unpack(UnsafeRawBufferPointer(SQLiteConnection.blobBytes(messageId)))
                {
                    let result = unpacked.withUTF8 { key.key(source: sourceBytes, messageId: $0) }
                    return sqlite_nio_sqlite3_result_int64(context, result)
                }
                sqlite_nio_sqlite3_result_int64(
                    context, key.key(source: sourceBytes, messageId: SQLiteConnection.textBytes(messageId)))
            }, nil, nil, nil)
        sqlite_nio_sqlite3_create_function_v2(
            handle, "touchpoint_id", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, arguments in
                guard count == 1, let arguments, let value = arguments[0] else {
                    return sqlite_nio_sqlite3_result_null(context)
                }
                guard sqlite_nio_sqlite3_value_type(value) == SQLITE_BLOB,
                    var unpacked = PackedID.unpack(UnsafeRawBufferPointer(SQLiteConnection.blobBytes(value)))
                else { return sqlite_nio_sqlite3_result_value(context, value) }
                unpacked.withUTF8 { text in
                    text.withMemoryRebound(to: CChar.self) { characters in
                        sqlite_nio_sqlite3_result_text64(
                            context, characters.baseAddress, UInt64(characters.count), SQLiteStatement.transient,
                            UInt8(SQLITE_UTF8))
                    }
                }
            }, nil, nil, nil)
        sqlite_nio_sqlite3_create_function_v2(
            handle, "touchpoint_packed_id", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, arguments in
                guard count == 1, let arguments, let value = arguments[0] else {
                    return sqlite_nio_sqlite3_result_null(context)
                }
                guard sqlite_nio_sqlite3_value_type(value) == SQLITE_TEXT,
                    let packed = PackedID.pack(String(decoding: SQLiteConnection.textBytes(value), as: UTF8.self))
                else { return sqlite_nio_sqlite3_result_value(context, value) }
                packed.withUnsafeBytes { bytes in
                    sqlite_nio_sqlite3_result_blob64(
                        context, bytes.baseAddress, UInt64(bytes.count), SQLiteStatement.transient)
                }
            }, nil, nil, nil)
    }

    /// A function argument's bytes as a blob.
    fileprivate static func blobBytes(_ value: OpaquePointer) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(
            start: sqlite_nio_sqlite3_value_blob(value).map { $0.assumingMemoryBound(to: UInt8.self) },
            count: Int(sqlite_nio_sqlite3_value_bytes(value)))
    }

    /// A function argument's bytes as UTF-8 text.
    fileprivate static func textBytes(_ value: OpaquePointer) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(
            start: sqlite_nio_sqlite3_value_text(value), count: Int(sqlite_nio_sqlite3_value_bytes(value)))
    }

    /// Copies this connection's whole database into `destination`'s with SQLite's online backup
    /// API, in one step: one read transaction, so the copy is one consistent snapshot even while
    /// another connection (a running collector) writes; in WAL mode those writes are not held up.
    func backup(into destination: SQLiteConnection) throws {
        guard let backup = sqlite_nio_sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            let message = String(cString: sqlite_nio_sqlite3_errmsg(destination.handle))
            throw StorageError(code: .unavailable, message: "cannot start the backup: \(message)")
        }
        let status = sqlite_nio_sqlite3_backup_step(backup, -1)
        let finish = sqlite_nio_sqlite3_backup_finish(backup)
        guard status == SQLITE_DONE, finish == SQLITE_OK else {
            let message = String(cString: sqlite_nio_sqlite3_errmsg(destination.handle))
            throw StorageError(
                code: .unavailable, message: "the backup failed (SQLite \(status), \(finish)): \(message)")
        }
    }

    /// Runs one statement and returns its rows.
    @discardableResult
    func execute(_ sql: String, _ binds: [SQLValue] = [], bytesAt bytes: Set<Int> = []) throws -> [SQLRow] {
        try withStatement(sql) { statement in
            for (offset, value) in binds.enumerated() {
                try statement.bind(Int32(offset + 1), value)
            }
            var rows: [SQLRow] = []
            let bytes = Set(bytes.map(Int32.init))
            while try statement.step() {
                rows.append(statement.row(bytes: bytes))
            }
            return rows
        }
    }

    /// Runs one statement once per element of `rows`, bound by `bind`.
    /// - Returns: per element, whether that run changed the database (an `INSERT … ON CONFLICT DO
    ///   NOTHING` that met its conflict changed nothing).
    func executeEach<Element>(
        _ sql: String, _ rows: some Sequence<Element>, bind: (Element, SQLiteStatement) throws -> Void
    ) throws -> [Bool] {
        try withStatement(sql) { statement in
            var changed: [Bool] = []
            changed.reserveCapacity(rows.underestimatedCount)
            for element in rows {
                try bind(element, statement)
                while try statement.step() {}
                changed.append(sqlite_nio_sqlite3_changes(handle) > 0)
                try statement.reset()
            }
            return changed
        }
    }

    /// Runs an `INSERT` once per element of `rows`, bound by `bind`.
    /// - Returns: per element, the new row's rowid, or nil when that run inserted nothing.
    func insertEach<Element>(
        _ sql: String, _ rows: some Sequence<Element>, bind: (Element, SQLiteStatement) throws -> Void
    ) throws -> [Int64?] {
        try withStatement(sql) { statement in
            var rowids: [Int64?] = []
            rowids.reserveCapacity(rows.underestimatedCount)
            for element in rows {
                try bind(element, statement)
                while try statement.step() {}
                rowids.append(
                    sqlite_nio_sqlite3_changes(handle) > 0 ? sqlite_nio_sqlite3_last_insert_rowid(handle) : nil)
                try statement.reset()
            }
            return rowids
        }
    }

    /// Runs one query with `binds` (in order from `?1`) and hands each row to `row`.
    func queryEach(_ sql: String, _ binds: [SQLValue], row: (SQLiteStatement) throws -> Void) throws {
        try queryEach(
            sql, CollectionOfOne(binds),
            bind: { binds, statement in
                for (index, value) in binds.enumerated() { try statement.bind(Int32(index + 1), value) }
            }, row: { _, statement in try row(statement) })
    }

    /// Runs one query per element of `elements`, bound by `bind`, and hands each row to `row`.
    func queryEach<Element>(
        _ sql: String, _ elements: some Sequence<Element>, bind: (Element, SQLiteStatement) throws -> Void,
        row: (Element, SQLiteStatement) throws -> Void
    ) throws {
        try withStatement(sql) { statement in
            for element in elements {
                try bind(element, statement)
                while try statement.step() { try row(element, statement) }
                try statement.reset()
            }
        }
    }

    /// Closes the connection (its kept statements first). Closing twice does nothing.
    func close() throws {
        let statements = idle.withLock { idle in
            defer { idle = nil }
            return idle.map { $0.statements.values.map(\.pointer) }
        }
        guard let statements else { return }
        for statement in statements { sqlite_nio_sqlite3_finalize(statement) }
        let status = sqlite_nio_sqlite3_close_v2(handle)
        guard status == SQLITE_OK else { throw error(status, running: "close") }
    }

    /// Runs `body` with a prepared statement for `sql`: a kept one when idle, else a new one; put
    /// back (reset) afterwards, in place of the least recently used one when enough are kept.
    private func withStatement<Result>(_ sql: String, _ body: (SQLiteStatement) throws -> Result) throws -> Result {
        let kept = try idle.withLock { idle -> OpaquePointer? in
            guard idle != nil else {
                throw StorageError(code: .unavailable, message: "the SQLite database is closed")
            }
            guard let kept = idle?.statements.removeValue(forKey: sql) else {
                idle?.prepared += 1
                return nil
            }
            return kept.pointer
        }
        let pointer = try kept ?? prepare(sql)
        let statement = SQLiteStatement(pointer: pointer, connection: self, sql: sql)
        defer {
            // Reset releases the statement's read or write lock; the bound values are replaced by
            // the next use's binds (every parameter is bound each time).
            sqlite_nio_sqlite3_reset(pointer)
            // A statement that outlived `close()` is finalized, which lets SQLite free the handle.
            let finalize = idle.withLock { idle in idle == nil ? pointer : idle?.keep(pointer, for: sql) }
            if let finalize { sqlite_nio_sqlite3_finalize(finalize) }
        }
        return try body(statement)
    }

    private func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        // The tail points into the C string, so it is read before the string goes away.
        let (status, hasMore) = sql.withCString { text -> (Int32, Bool) in
            var tail: UnsafePointer<CChar>?
            let status = sqlite_nio_sqlite3_prepare_v3(
                handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, &tail)
            return (status, tail.map { !String(cString: $0).allSatisfy(\.isWhitespace) } ?? false)
        }
        guard status == SQLITE_OK else { throw error(status, running: sql) }
        guard let statement else {
            throw StorageError(code: .database, message: "SQLite: no statement in \(Self.excerpt(sql))")
        }
        if hasMore {
            sqlite_nio_sqlite3_finalize(statement)
            throw StorageError(code: .database, message: "SQLite: more than one statement in \(Self.excerpt(sql))")
        }
        return statement
    }

    /// The error SQLite reported for `status`, naming the statement it ran.
    fileprivate func error(_ status: Int32, running sql: String) -> StorageError {
        let message = String(cString: sqlite_nio_sqlite3_errmsg(handle))
        let code: StorageError.Code = (status & 0xff) == SQLITE_BUSY ? .unavailable : .database
        return StorageError(
            code: code, message: "SQLite error \(status) (\(message)) running \(Self.excerpt(sql))")
    }

    static func excerpt(_ sql: String) -> String {
        let flat = sql.split(whereSeparator: \.isNewline).joined(separator: " ")
        return flat.count <= 120 ? flat : flat.prefix(120) + "…"
    }
}

/// A prepared statement in use: parameters to bind, a step at a time, the current row's columns.
struct SQLiteStatement {
    fileprivate let pointer: OpaquePointer
    fileprivate let connection: SQLiteConnection
    fileprivate let sql: String

    /// Binds text (nil: NULL) to the parameter at `index` (from 1).
    func bind(_ index: Int32, _ text: String?) throws {
        guard let text else { return try check(sqlite_nio_sqlite3_bind_null(pointer, index)) }
        // A native string lends its bytes as they are; any other is made contiguous first.
        if let status = text.utf8.withContiguousStorageIfAvailable({ bindText(index, $0) }) {
            return try check(status)
        }
        var contiguous = text
        try check(contiguous.withUTF8 { bindText(index, $0) })
    }

    /// Binds UTF-8 bytes as text; SQLITE_TRANSIENT: SQLite copies them before the call returns.
    private func bindText(_ index: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        bytes.withMemoryRebound(to: CChar.self) { characters in
            // A null pointer would bind NULL, so empty text points at a C string of its own.
            sqlite_nio_sqlite3_bind_text64(
                pointer, index, characters.baseAddress ?? Self.empty, UInt64(characters.count), Self.transient,
                UInt8(SQLITE_UTF8))
        }
    }

    /// Binds an event's message or session id (nil: NULL) to the parameter at `index` (from 1):
    /// packed (``PackedID``) when it is a UUID, else as text.
    func bind(id index: Int32, _ id: String?) throws {
        try bind(id: index, id, packed: id.flatMap(PackedID.Bytes.init))
    }

    /// Binds an id packed before (``PackedID/Bytes``), or `id` as text when it did not pack (nil:
    /// NULL): as ``bind(id:_:)`` binds it, without packing it here.
    func bind(id index: Int32, _ id: String?, packed: PackedID.Bytes?) throws {
        guard let packed else { return try bind(index, id) }
        try check(
            packed.withBytes { bytes in
                sqlite_nio_sqlite3_bind_blob64(pointer, index, bytes.baseAddress, UInt64(bytes.count), Self.transient)
            })
    }

    /// Binds bytes as a blob to the parameter at `index` (from 1).
    func bind(blob index: Int32, _ bytes: [UInt8]) throws {
        try check(
            bytes.withUnsafeBytes { buffer in
                sqlite_nio_sqlite3_bind_blob64(
                    pointer, index, buffer.baseAddress ?? UnsafeRawPointer(Self.empty), UInt64(buffer.count),
                    Self.transient)
            })
    }

    /// Binds an integer (nil: NULL) to the parameter at `index` (from 1).
    func bind(_ index: Int32, _ integer: Int64?) throws {
        guard let integer else { return try check(sqlite_nio_sqlite3_bind_null(pointer, index)) }
        try check(sqlite_nio_sqlite3_bind_int64(pointer, index, integer))
    }

    /// Binds `value` to the parameter at `index` (from 1).
    func bind(_ index: Int32, _ value: SQLValue) throws {
        switch value {
        case .null: try check(sqlite_nio_sqlite3_bind_null(pointer, index))
        case .int(let number): try bind(index, number)
        case .double(let number): try check(sqlite_nio_sqlite3_bind_double(pointer, index, number))
        case .text(let text): try bind(index, text)
        case .id(let id): try bind(id: index, id)
        case .bytes(let bytes): try bind(blob: index, bytes)
        case .textArray, .intArray:
            throw StorageError(code: .unsupported, message: "SQLite has no array parameters")
        }
    }

    /// Runs the statement to its next row.
    /// - Returns: true when a row is ready to read, false when the statement is done.
    func step() throws -> Bool {
        let status = sqlite_nio_sqlite3_step(pointer)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(status, running: sql)
        }
    }

    /// Makes the statement ready to run again, reporting the error of its last run if it had one.
    func reset() throws {
        try check(sqlite_nio_sqlite3_reset(pointer))
    }

    /// The current row's column `index` (from 0) as an integer (0 for NULL).
    func integer(_ index: Int32) -> Int64 {
        sqlite_nio_sqlite3_column_int64(pointer, index)
    }

    /// Whether the current row's column `index` (from 0) is NULL.
    func isNull(_ index: Int32) -> Bool {
        sqlite_nio_sqlite3_column_type(pointer, index) == SQLITE_NULL
    }

    /// The current row's column `index` (from 0) as text (nil for NULL).
    func text(_ index: Int32) -> String? {
        guard !isNull(index) else { return nil }
        let count = Int(sqlite_nio_sqlite3_column_bytes(pointer, index))
        guard count > 0, let bytes = sqlite_nio_sqlite3_column_blob(pointer, index) else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The current row's column `index` (from 0) as bytes (empty for NULL).
    func bytes(_ index: Int32) -> [UInt8] {
        let count = Int(sqlite_nio_sqlite3_column_bytes(pointer, index))
        guard count > 0, let bytes = sqlite_nio_sqlite3_column_blob(pointer, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// The current row's values; the columns in `bytes` as ``SQLValue/bytes(_:)``.
    func row(bytes: Set<Int32> = []) -> SQLRow {
        (0..<sqlite_nio_sqlite3_column_count(pointer)).map { index in
            guard bytes.contains(index) else { return column(index) }
            return sqlite_nio_sqlite3_column_type(pointer, index) == SQLITE_NULL ? .null : .bytes(self.bytes(index))
        }
    }

    private func column(_ index: Int32) -> SQLValue {
        switch sqlite_nio_sqlite3_column_type(pointer, index) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .int(sqlite_nio_sqlite3_column_int64(pointer, index))
        case SQLITE_FLOAT: return .double(sqlite_nio_sqlite3_column_double(pointer, index))
        case SQLITE_BLOB:
            // The collector's blobs are packed ids (the secret of the message keys is read as bytes).
            let count = Int(sqlite_nio_sqlite3_column_bytes(pointer, index))
            let bytes = UnsafeRawBufferPointer(start: sqlite_nio_sqlite3_column_blob(pointer, index), count: count)
            return .text(PackedID.unpack(bytes) ?? String(decoding: bytes, as: UTF8.self))
        default:
            return .text(text(index) ?? "")
        }
    }

    private func check(_ status: Int32) throws {
        guard status == SQLITE_OK else { throw connection.error(status, running: sql) }
    }

    /// SQLite's `SQLITE_TRANSIENT` destructor (-1), a C macro that Swift cannot import.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    private nonisolated(unsafe) static let empty: UnsafePointer<CChar> = {
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return UnsafePointer(pointer)
    }()
}
