import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO
import TouchpointCore

/// SQLite through sqlite-nio, which bundles its own SQLite: nothing to install on the machine.
///
/// One write connection, used by one transaction at a time (SQLite has a single writer), one
/// read connection for queries (in WAL mode readers never wait for the writer), and one that
/// checkpoints the WAL in the background, so that copying pages back into the database and its
/// `fsync`s never stall a write (measured here: inserts ran 2.4 times faster than with SQLite's
/// own checkpoints on commit).
final class SQLiteBackend: SQLBackend {
    let dialect = SQLDialect.sqlite
    private let writer: SQLiteConnection
    private let reader: SQLiteConnection
    private let checkpointer: SQLiteConnection
    private let checkpointTask = Locked<Task<Void, Never>?>(nil)
    private let writeLock = AsyncLock()
    private let closed = Locked(false)
    /// The WAL's length at the last checkpoint, to skip catching up when nothing was written.
    private let lastCheckpointedFrames = Locked<Int64>(-1)

    /// How often the background checkpoint runs.
    static let checkpointInterval = Duration.milliseconds(250)
    private init(writer: SQLiteConnection, reader: SQLiteConnection, checkpointer: SQLiteConnection, logger: Logger) {
        self.writer = writer
        self.reader = reader
        self.checkpointer = checkpointer
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.checkpointInterval)
                // PASSIVE: copies what it can without waiting for, or blocking, the writer.
                guard !Task.isCancelled, let backend = self else { return }
                do {
                    try await backend.checkpoint()
                } catch {
                    logger.warning("WAL checkpoint failed", metadata: ["error": "\(error)"])
                }
            }
        }
        checkpointTask.withLock { $0 = task }
    }

    /// Copies WAL pages back into the database without stopping writers, then copies the frames
    /// written meanwhile while holding the write lock (writers wait, they do not spin), so the
    /// next write starts the WAL over from its beginning.
    ///
    /// Under a steady stream of writes a passive checkpoint never catches up with the writer (it
    /// copies what it saw when it started, and reports that as done), so the WAL would never start
    /// over and the file would grow without bound. Catching up on every pass that found new frames
    /// keeps each wait short (the frames of a few milliseconds) and the WAL small enough to stay
    /// in the page cache; a second PASSIVE pass rather than TRUNCATE or RESTART reuses the file in
    /// place instead of cutting it and growing it again. Measured with `touchpoint loadgen`
    /// (BENCHMARKS.md): p99 latency 47.5 ms on a loaded machine, against 105–110 ms with a
    /// TRUNCATE checkpoint past 16,384 frames; the WAL file stayed at 22–25 MB.
    private func checkpoint() async throws {
        let result = try await Self.run("PRAGMA wal_checkpoint(PASSIVE)", on: checkpointer)
        // (busy, frames in the WAL, frames checkpointed); -1 when not in WAL mode.
        guard let frames = result.first?[1].int, frames > 0,
            lastCheckpointedFrames.withLock({ last in
                defer { last = frames }
                return last != frames
            })
        else { return }  // nothing written since the last pass
        _ = try await writeLock.withLock {
            try await Self.run("PRAGMA wal_checkpoint(PASSIVE)", on: checkpointer)
        }
    }

    /// Opens (creating when absent) the database file at `path` in WAL mode.
    static func open(path: String, logger: Logger) async throws -> SQLiteBackend {
        let writer = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        do {
            // WAL: readers do not block the writer. synchronous=NORMAL: a commit survives a crash of
            // the process (the WAL is written before COMMIT returns); only a power loss can drop the
            // last transactions.
            for pragma in [
                "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA temp_store = MEMORY",
                "PRAGMA cache_size = -65536", "PRAGMA wal_autocheckpoint = 0", "PRAGMA journal_size_limit = 67108864",
                // A sleeping wait for other processes' locks, instead of sqlite-nio's spinning one.
                "PRAGMA busy_timeout = 10000",
            ] {
                try await run(pragma, on: writer)
            }
        } catch {
            try? await writer.close()
            throw error
        }
        var others: [SQLiteConnection] = []
        do {
            for role in ["reader", "checkpointer"] {
                let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
                others.append(connection)
                try await run("PRAGMA busy_timeout = 10000", on: connection)
                if role == "reader" { try await run("PRAGMA query_only = ON", on: connection) }
            }
        } catch {
            for connection in others { try? await connection.close() }
            try? await writer.close()
            throw error
        }
        return SQLiteBackend(writer: writer, reader: others[0], checkpointer: others[1], logger: logger)
    }

    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        try await Self.run(sql, binds, on: reader)
    }

    func writeStatement(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        // Under the write lock: a statement run inside another task's open transaction would be
        // rolled back with it after being acknowledged.
        try await writeLock.withLock { try await Self.run(sql, binds, on: writer) }
    }

    func write<Result: Sendable>(
        _ body: @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        try await writeLock.withLock {
            try await Self.run("BEGIN IMMEDIATE", on: writer)
            let transaction = Transaction(connection: writer)
            do {
                let result = try await body(transaction)
                try await Self.run("COMMIT", on: writer)
                return result
            } catch {
                _ = try? await Self.run("ROLLBACK", on: writer)
                throw error
            }
        }
    }

    func withSchemaLock<Result: Sendable>(
        _ body: @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        // BEGIN IMMEDIATE takes SQLite's write lock, which also excludes other processes.
        try await write(body)
    }

    func close() async throws {
        // A task of its own: closing must happen even when the caller was cancelled (a server
        // that failed to start), or the connections would be dropped open.
        if let task = checkpointTask.value {
            task.cancel()
            await task.value
        }
        try await Task {
            try await writeLock.withLock {
                guard !closed.value else { return }
                try await checkpointer.close()
                try await reader.close()
                // Closing the last connection checkpoints the whole WAL and removes it.
                try await writer.close()
                closed.withLock { $0 = true }
            }
        }.value
    }

    private struct Transaction: SQLTransaction {
        let connection: SQLiteConnection

        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
            try await SQLiteBackend.run(sql, binds, on: connection)
        }
    }

    @discardableResult
    private static func run(_ sql: String, _ binds: [SQLValue] = [], on connection: SQLiteConnection) async throws
        -> [SQLRow]
    {
        let rows = Locked<[SQLRow]>([])
        let data = try binds.map(Self.data)
        try await connection.query(sql, data) { row in
            let values = row.columns.map { Self.value($0.data) }
            rows.withLock { $0.append(values) }
        }
        return rows.value
    }

    private static func data(_ value: SQLValue) throws -> SQLiteData {
        switch value {
        case .null: return .null
        case .int(let number): return .integer(SQLiteInt64(number))
        case .double(let number): return .float(number)
        case .text(let text): return .text(text)
        case .textArray, .intArray:
            throw StorageError(code: .unsupported, message: "SQLite has no array parameters")
        }
    }

    private static func value(_ data: SQLiteData) -> SQLValue {
        switch data {
        case .null: return .null
        case .integer(let number): return .int(Int64(number))
        case .float(let number): return .double(number)
        case .text(let text): return .text(text)
        case .blob(let buffer): return .text(String(buffer: buffer))
        }
    }
}
