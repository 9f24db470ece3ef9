import Foundation
import Logging
import NIOPosix
import TouchpointCore

/// SQLite through its C API (``SQLiteConnection``), on SQLite as bundled by sqlite-nio: nothing to
/// install on the machine.
///
/// One write connection, used by one transaction at a time (SQLite has a single writer), a pool
/// of ``readerCount`` read connections for queries (in WAL mode readers never wait for the writer
/// nor for each other; each query goes to the reader with the fewest scans, then the fewest
/// queries, in hand (``read(_:)``), so one slow query does not hold up `/health` or a config
/// fetch, and two halves of a range are read at once), and one that
/// checkpoints the WAL in the background, so that copying pages back into the database and its
/// `fsync`s never stall a write (measured here: inserts ran 2.4 times faster than with SQLite's
/// own checkpoints on commit); and a thread that flushes the writer's commits to disk
/// (``WALSync``), so the writer starts the next transaction while the last one's `fsync` runs.
/// Each connection has a thread of its own for its blocking calls, so none of them blocks a thread
/// of Swift's cooperative pool.
final class SQLiteBackend: SQLBackend {
    let dialect = SQLDialect.sqlite
    private let writer: Lane
    private let readers: [Lane]
    /// What each reader has in hand, to send the next query to the least busy.
    private let readerLoad: Locked<[ReaderLoad]>
    private let checkpointer: Lane
    /// Flushes the writer's commits to disk off its thread (``WALSync``).
    let walSync: WALSync
    private let checkpointTask = Locked<Task<Void, Never>?>(nil)
    private let writeLock = AsyncLock()
    private let closed = Locked(false)
    /// For tests: when not nil, every statement run through ``query(_:_:)``, ``scan(_:_:)``,
    /// ``writeStatement(_:_:)`` and ``write(_:)`` is added here (which indexes do they use?).
    let statementLog = Locked<[(sql: String, binds: [SQLValue])]?>(nil)
    /// The WAL's length at the last checkpoint, to skip catching up when nothing was written.
    private let lastCheckpointedFrames = Locked<Int64>(-1)

    /// How often the background checkpoint runs.
    static let checkpointInterval = Duration.milliseconds(250)
    /// How many read connections the pool has.
    static let readerCount = 3

    private init(lanes: [Lane], flush: @escaping WALSync.Flush, logger: Logger) {
        walSync = WALSync(flush: flush, logger: logger)
        writer = lanes[0]
        checkpointer = lanes[1]
        readers = Array(lanes.dropFirst(2))
        readerLoad = Locked(Array(repeating: ReaderLoad(), count: lanes.count - 2))
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

    /// Copies WAL pages back into the database without stopping writers, until the frames written
    /// meanwhile are few; copies those while holding the write lock (writers wait, they do not
    /// spin), so the next write starts the WAL over from its beginning.
    ///
    /// Under a steady stream of writes a passive checkpoint never catches up with the writer (it
    /// copies what it saw when it started, and reports that as done), so the WAL would never start
    /// over and the file would grow without bound. Each unlocked pass copies what was written
    /// during the one before, a fraction of it (copying is several times faster than writing), so
    /// the locked pass that finishes has only a few milliseconds of frames to copy; a PASSIVE pass
    /// rather than TRUNCATE or RESTART reuses the file in place instead of cutting it and growing
    /// it again. Measured with `touchpoint loadgen` (BENCHMARKS.md): a locked pass straight after
    /// the first held writes for 35–42 ms every 300 ms (p99 44 ms); TRUNCATE past 16,384 frames
    /// gave p99 105–110 ms; with no locked pass the WAL grew past 300 MB.
    private func checkpoint() async throws {
        var frames = try await passiveCheckpoint()
        let previous = lastCheckpointedFrames.withLock { [frames] last in
            defer { last = frames }
            return last
        }
        guard frames > 0, frames != previous else { return }  // nothing written since the last pass
        for _ in 0..<Self.unlockedCatchUpPasses {
            let next = try await passiveCheckpoint()
            defer { frames = next }
            // No new frames: this pass copied them all, and the next write starts the WAL over.
            // Fewer: a write already started it over.
            if next <= frames { return lastCheckpointedFrames.withLock { $0 = next } }
            if next - frames <= Self.lockedCatchUpFrames { break }
        }
        let last = try await writeLock.withLock { try await passiveCheckpoint() }
        lastCheckpointedFrames.withLock { $0 = last }
    }

    /// Unlocked passes at most before the locked one, when writes outpace the checkpoint.
    static let unlockedCatchUpPasses = 4
    /// New frames (4 KB pages) few enough to copy while writes wait.
    static let lockedCatchUpFrames: Int64 = 512

    /// One PASSIVE checkpoint.
    /// - Returns: the frames in the WAL (-1 when not in WAL mode).
    private func passiveCheckpoint() async throws -> Int64 {
        // Rows of (busy, frames in the WAL, frames checkpointed).
        let result = try await checkpointer.run { try $0.execute("PRAGMA wal_checkpoint(PASSIVE)") }
        return result.first?[1].int ?? -1
    }

    /// Statements the writer's connection has prepared so far (for tests: does a write reuse its
    /// statements?).
    var writerStatementsPrepared: Int { writer.connection.statementsPrepared }

    /// The value of `PRAGMA <name>` on the connection that commits ingest (`synchronous`,
    /// `journal_mode`, …): what a write's durability depends on.
    func writerSetting(_ name: String) async throws -> SQLValue? {
        try await writer.run { try $0.execute("PRAGMA \(name)") }.first?.first
    }

    /// Opens (creating when absent) the database file at `path` in WAL mode.
    ///
    /// A new database file is created owner-only (0600) before SQLite opens it; SQLite gives its
    /// `-wal` and `-shm` files the database file's mode, so no event is ever readable by others.
    /// - Parameter flush: flushes the WAL to disk (``WALSync``); `fsync` of the `-wal` file unless a
    ///   test puts a failing one in its place.
    static func open(path: String, logger: Logger, flush: WALSync.Flush? = nil) async throws -> SQLiteBackend {
        try createOwnerOnly(path)
        // A thread of its own for each connection: a long query never holds up a write or a
        // checkpoint, and none of them blocks a thread of Swift's cooperative pool.
        let threads = (0..<(2 + readerCount)).map { _ in NIOThreadPool(numberOfThreads: 1) }
        for thread in threads { thread.start() }
        do {
            let connections = try await threads[0].runIfActive { try openConnections(path: path) }
            let lanes = zip(connections, threads).map { Lane(connection: $0, thread: $1) }
            // The WAL where SQLite keeps it: beside the file a symbolic link at `path` leads to.
            let wal = connections[0].walPath ?? path + "-wal"
            return SQLiteBackend(lanes: lanes, flush: flush ?? WALSync.fsyncing(wal), logger: logger)
        } catch {
            for thread in threads { try? await thread.shutdownGracefully() }
            throw error
        }
    }

    /// The writer, checkpointer and reader connections, in that order, set up; none left open on
    /// failure.
    private static func openConnections(path: String) throws -> [SQLiteConnection] {
        var connections: [SQLiteConnection] = []
        do {
            for role in ["writer", "checkpointer"] + Array(repeating: "reader", count: readerCount) {
                let connection = try SQLiteConnection.open(path: path)
                connections.append(connection)
                // A sleeping wait for other processes' locks.
                try connection.execute("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)")
                switch role {
                case "writer":
                    // WAL: readers do not block the writer. synchronous=NORMAL: a COMMIT does not
                    // fsync the WAL, `WALSync` does, on a thread of its own, before any write is
                    // acknowledged, so a 200 survives a power loss too while the writer goes on;
                    // checkpoints still sync (the WAL before copying it, the database before the
                    // WAL starts over), so the file stays consistent. Group commit puts many
                    // requests in one transaction, and one fsync serves every commit made while
                    // the one before ran. A 4 MB page cache: inserts touch the
                    // right-hand pages of the indexes, and the operating system caches the rest;
                    // measured with loadgen, 92-98k events/s against 86-91k with 64 MB (SQLite
                    // walks its whole cache at the end of each write transaction).
                    for pragma in [
                        "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA temp_store = MEMORY",
                        "PRAGMA cache_size = -4096", "PRAGMA wal_autocheckpoint = 0",
                        "PRAGMA journal_size_limit = 67108864",
                    ] {
                        try connection.execute(pragma)
                    }
                case "reader":
                    // temp_store=MEMORY: the B-trees a query sorts and groups in (DISTINCT, GROUP BY)
                    // are held in memory instead of a temporary file; a 12-week retention over ten
                    // million events (490,000 distinct person-weeks) took 1.2 s instead of 3.9 s in
                    // the sqlite3 shell (1.5 s with a 64 MB cache for the temporary file).
                    // They grow with the rows a query sorts: over the benchmark's queries the
                    // collector's peak went from 353 to 404 MB resident.
                    try connection.execute("PRAGMA query_only = ON")
                    try connection.execute("PRAGMA temp_store = MEMORY")
                default:
                    break
                }
            }
        } catch {
            for connection in connections { try? connection.close() }
            throw error
        }
        return connections
    }

    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        try await query(sql, binds, bytesAt: [])
    }

    func query(_ sql: String, _ binds: [SQLValue], bytesAt bytes: Set<Int>) async throws -> [SQLRow] {
        log(sql, binds)
        return try await run(onClaimed: claimReader(scan: false)) { try $0.execute(sql, binds, bytesAt: bytes) }
    }

    /// ``query(_:_:)`` for a statement that reads many rows, such as one half of a range read
    /// at once with the other: run as a scan (``read(_:)``).
    func scan(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        log(sql, binds)
        return try await read { try $0.execute(sql, binds) }
    }

    /// What a reader has in hand: queries, and how many of them are scans (``read(_:)``).
    struct ReaderLoad: Sendable, Equatable {
        var queries = 0
        var scans = 0

        /// Whether a reader with this load is a better choice than one with `other`: fewer
        /// scans first, then fewer queries (and the first reader among equals).
        func isLighter(than other: ReaderLoad) -> Bool { (scans, queries) < (other.scans, other.queries) }
    }

    /// Runs `body`, a scan (a read of many rows, taken one by one or as a list), on the reader
    /// with the fewest scans in hand (then the fewest queries).
    ///
    /// A reader's load counts its scans apart from its other queries so that scans asked for at
    /// once (the two halves of a range, ``SQLCollectorStorage``) go to readers of their own while
    /// there are enough: counted as queries alone, a half could go to the reader already
    /// running the other half whenever the other readers had as many short queries in hand, and
    /// wait for it, taking twice as long (measured: a breakdown at 50 M events took 3.6 s in most
    /// requests instead of 1.9 s). Short queries likewise go to readers without a scan first.
    func read<Result: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> Result) async throws
        -> Result
    {
        try await run(onClaimed: claimReader(scan: true), body)
    }

    /// Runs `body` on a reader connection with no query in hand, or answers nil at once when
    /// every reader has one: for work that helps only when it waits for nothing (a slow query of
    /// the dashboard's holds up no ingest request this way).
    func readIfIdle<Result: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> Result) async throws
        -> Result?
    {
        let idle = readerLoad.withLock { load -> Int? in
            guard let index = load.indices.first(where: { load[$0].queries == 0 }) else { return nil }
            load[index].queries += 1
            return index
        }
        guard let idle else { return nil }
        return try await run(onClaimed: (idle, false), body)
    }

    /// Counts one more query (a scan when `scan`) in hand on the lightest reader
    /// (``ReaderLoad/isLighter(than:)``).
    /// - Returns: that reader's index, and whether it was claimed for a scan.
    private func claimReader(scan: Bool) -> (index: Int, scan: Bool) {
        readerLoad.withLock { load in
            var lightest = 0
            for index in load.indices.dropFirst() where load[index].isLighter(than: load[lightest]) {
                lightest = index
            }
            load[lightest].queries += 1
            if scan { load[lightest].scans += 1 }
            return (lightest, scan)
        }
    }

    /// Runs `body` on the reader `claim` claimed (``claimReader(scan:)``), then gives the claim back.
    private func run<Result: Sendable>(
        onClaimed claim: (index: Int, scan: Bool), _ body: @escaping @Sendable (SQLiteConnection) throws -> Result
    ) async throws -> Result {
        defer {
            readerLoad.withLock { load in
                load[claim.index].queries -= 1
                if claim.scan { load[claim.index].scans -= 1 }
            }
        }
        return try await readers[claim.index].run(body)
    }

    /// Queries in hand per reader (for tests: which readers a slow query occupies).
    var readersBusy: [Int] { readerLoad.value.map(\.queries) }

    /// Scans in hand per reader (for tests).
    var readerScans: [Int] { readerLoad.value.map(\.scans) }

    func writeStatement(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        // Under the write lock: a statement run inside another task's open transaction would be
        // rolled back with it after being acknowledged.
        log(sql, binds)
        try walSync.check()
        let (rows, ticket) = try await writeLock.withLock {
            try await writer.run { [walSync] connection in (try connection.execute(sql, binds), walSync.commit()) }
        }
        try await walSync.durable(ticket)
        return rows
    }

    private func log(_ sql: String, _ binds: [SQLValue]) {
        statementLog.withLock { log in log?.append((sql, binds)) }
    }

    func write<Result: Sendable>(
        _ body: @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        try walSync.check()
        let (result, ticket) = try await writeLock.withLock {
            try await writer.run { try $0.execute("BEGIN IMMEDIATE") }
            let transaction = Transaction(writer: writer, log: statementLog)
            do {
                let result = try await body(transaction)
                let ticket = try await writer.run { [walSync] connection in
                    try connection.execute("COMMIT")
                    return walSync.commit()
                }
                return (result, ticket)
            } catch {
                _ = try? await writer.run { try $0.execute("ROLLBACK") }
                throw error
            }
        }
        try await walSync.durable(ticket)
        return result
    }

    /// Runs `body` in one write transaction on the writer's thread, without leaving it between
    /// statements, and returns once the transaction is on disk.
    func writeNow<Result: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> Result) async throws
        -> Result
    {
        let (result, ticket) = try await writeCommitted(body)
        try await ticket.durable()
        return result
    }

    /// Runs `body` in one write transaction on the writer's thread, without leaving it between
    /// statements (the ingest path's whole write is one trip to that thread), and returns as soon
    /// as it committed, with the ticket to wait on before anything is acknowledged: the writer is
    /// free for the next transaction while this one is flushed to disk.
    func writeCommitted<Result: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> Result)
        async throws -> (Result, WALSync.Ticket)
    {
        try await writeCommitted(timedBy: nil, rows: 0) { connection, _ in try body(connection) }
    }

    /// As ``writeCommitted(_:)``, with the write's steps timed: `body` ends each of its steps on
    /// the laps it is given, the commit is the last, and the write's times and `rows` are added to
    /// `steps` once it committed.
    func writeCommitted<Result: Sendable>(
        timedBy steps: WriterSteps?, rows: Int,
        _ body: @escaping @Sendable (SQLiteConnection, inout WriterSteps.Laps) throws -> Result
    ) async throws -> (Result, WALSync.Ticket) {
        try walSync.check()
        return try await writeLock.withLock {
            try await writer.run { [walSync] connection in
                try connection.execute("BEGIN IMMEDIATE")
                do {
                    var laps = WriterSteps.Laps()
                    let result = try body(connection, &laps)
                    try connection.execute("COMMIT")
                    laps.end(.commit)
                    steps?.record(laps, rows: rows)
                    return (result, WALSync.Ticket(sync: walSync, number: walSync.commit()))
                } catch {
                    _ = try? connection.execute("ROLLBACK")
                    throw error
                }
            }
        }
    }

    func withSchemaLock<Result: Sendable>(
        _ body: @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        // BEGIN IMMEDIATE takes SQLite's write lock, which also excludes other processes.
        // Migrations sort the entries of the indexes they build in temporary storage, which the
        // writer keeps in memory: an index of 50 M events took 3.2 GB there. On disk meanwhile
        // (set outside the transaction: SQLite does not change it within one).
        try await setWriterTemporaryStorage("FILE")
        do {
            let result = try await write(body)
            try await setWriterTemporaryStorage("MEMORY")
            return result
        } catch {
            try? await setWriterTemporaryStorage("MEMORY")
            throw error
        }
    }

    private func setWriterTemporaryStorage(_ place: String) async throws {
        try await writeLock.withLock { _ = try await writer.run { try $0.execute("PRAGMA temp_store = \(place)") } }
    }

    /// How long a connection sleeps on another's lock before SQLite answers busy.
    static let busyTimeoutMilliseconds = 10_000

    /// Checkpoints the whole write-ahead log into the database and truncates it to nothing, on the
    /// writer between writes. A reader in the middle of a query keeps the log from being emptied
    /// (SQLite answers busy): then it is tried again, the write lock let go in between, up to 50
    /// times over about 5 seconds, after which the error says so (the log is overwritten by later
    /// writes in any case). Each attempt answers at once: a `TRUNCATE` checkpoint waits for
    /// readers through the busy handler, which would hold the write lock, and with it ingest,
    /// for up to ``busyTimeoutMilliseconds`` an attempt.
    func purgeLog() async throws {
        for attempt in 1...50 {
            let busy = try await writeLock.withLock {
                try await writer.run { (connection: SQLiteConnection) -> [SQLRow] in
                    _ = try connection.execute("PRAGMA busy_timeout = 0")
                    defer { _ = try? connection.execute("PRAGMA busy_timeout = \(Self.busyTimeoutMilliseconds)") }
                    return try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                }.first?.first?.int ?? 0
            }
            guard busy != 0 else { return }
            if attempt < 50 { try await Task.sleep(for: .milliseconds(100)) }
        }
        throw StorageError(
            code: .unavailable,
            message:
                "readers kept the write-ahead log from being emptied after a deletion; it is overwritten by later writes"
        )
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
                closed.withLock { $0 = true }
                // Every commit flushed first (a failure was told to the writes that waited).
                try? await walSync.durable(walSync.lastCommit)
                // Each connection closes on its own thread, after the calls already queued there
                // (a call queued later finds it closed); the writer last: closing the last
                // connection checkpoints the whole WAL and removes it.
                var failure: (any Error)?
                for lane in [checkpointer] + readers + [writer] {
                    do {
                        try await lane.run { try $0.close() }
                    } catch {
                        failure = failure ?? error
                    }
                    try? await lane.thread.shutdownGracefully()
                }
                await walSync.close()
                if let failure { throw failure }
            }
        }.value
    }

    /// A connection and the thread that makes its (blocking) calls.
    private struct Lane: Sendable {
        let connection: SQLiteConnection
        let thread: NIOThreadPool

        /// Runs `body` with the connection on its thread.
        ///
        /// Not cancellable, on purpose: a statement is always run once asked for, so a cancelled
        /// request can never leave a transaction open on the writer (`runIfActive` would skip a
        /// `COMMIT` or `ROLLBACK` whose task was cancelled).
        @discardableResult
        func run<Result: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> Result) async throws
            -> Result
        {
            try await withCheckedThrowingContinuation { continuation in
                thread.submit { [connection] state in
                    guard case .active = state else {
                        return continuation.resume(
                            throwing: StorageError(code: .unavailable, message: "the SQLite database is closed"))
                    }
                    continuation.resume(with: Swift.Result { try body(connection) })
                }
            }
        }
    }

    private struct Transaction: SQLTransaction {
        let writer: Lane
        let log: Locked<[(sql: String, binds: [SQLValue])]?>

        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
            try await query(sql, binds, bytesAt: [])
        }

        func query(_ sql: String, _ binds: [SQLValue], bytesAt bytes: Set<Int>) async throws -> [SQLRow] {
            log.withLock { log in log?.append((sql, binds)) }
            return try await writer.run { try $0.execute(sql, binds, bytesAt: bytes) }
        }
    }
}

/// Creates the file at `path` with mode 0600 when it does not exist; an existing file is left as it is.
func createOwnerOnly(_ path: String) throws(FileError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw FileError.current("open", path) }
    _ = close(descriptor)
}
