import Logging
import TouchpointCore

/// 64-bit keys and the rows they belong to (a rowid or seq each), held in memory until they are
/// merged into a key-ordered table: the recent part of ``MessageKeyIndex`` and ``SessionKeys``.
///
/// Most keys have one row; two ids that share a key have a row each, all kept.
struct KeysInMemory {
    /// The first row recorded with each key.
    private var first: [Int64: Int64] = [:]
    /// Further rows with a key already in `first`.
    private var more: [Int64: [Int64]] = [:]
    /// The rows held.
    private(set) var count = 0

    /// Notes that `row` has `key`.
    mutating func insert(_ key: Int64, row: Int64) {
        if first[key] == nil {
            first[key] = row
        } else {
            more[key, default: []].append(row)
        }
        count += 1
    }

    /// Calls `body` with each row held with `key`.
    func forEachRow(of key: Int64, _ body: (Int64) -> Void) {
        guard let row = first[key] else { return }
        body(row)
        for row in more[key] ?? [] { body(row) }
    }

    /// The smallest row held (nil: none).
    private var oldest: Int64? {
        var oldest = first.values.min()
        for rows in more.values { oldest = min(oldest ?? .max, rows.min() ?? .max) }
        return oldest
    }

    /// What one merge takes: all the (key, row)s held when there are at most `maximum`; else those
    /// of the `maximum` rows from the oldest held (not from a watermark: the rows after it may have
    /// been deleted before a restart). Each row is held once, so at most `maximum` of them.
    func oldestEntries(atMost maximum: Int) -> [(key: Int64, row: Int64)] {
        guard count > maximum, let oldest else { return entries(through: .max, capacity: count) }
        return entries(through: oldest - 1 + Int64(maximum), capacity: maximum)
    }

    /// Every (key, row) held whose row is at most `last`, in no particular order (room made for
    /// `capacity`: a backlog can be millions more than one merge takes).
    private func entries(through last: Int64, capacity: Int) -> [(key: Int64, row: Int64)] {
        var entries: [(key: Int64, row: Int64)] = []
        entries.reserveCapacity(capacity)
        for (key, row) in first where row <= last { entries.append((key, row)) }
        for (key, rows) in more { for row in rows where row <= last { entries.append((key, row)) } }
        return entries
    }

    /// Removes one (key, row), if it is held. A key whose first row goes keeps its others: the
    /// next becomes its first.
    mutating func remove(_ key: Int64, row: Int64) {
        if first[key] == row {
            if var rows = more.removeValue(forKey: key) {
                first[key] = rows.removeFirst()
                if !rows.isEmpty { more[key] = rows }
            } else {
                first[key] = nil
            }
        } else if var rows = more[key], let position = rows.firstIndex(of: row) {
            rows.remove(at: position)
            more[key] = rows.isEmpty ? nil : rows
        } else {
            return
        }
        count -= 1
    }
}

/// The two halves of a merge of keys from memory into their table that ``MessageKeyIndex`` and
/// ``SessionKeys`` share: the writes, paced, and the freeing, in slices.
enum KeyMerge {
    /// Writes `sorted` (in the table's order) `chunk` entries per transaction on the writer's
    /// connection (`body` writes one chunk). Paced: after each transaction the merge waits twice as
    /// long as it took, so it takes at most about a third of the writer's time (and of the disk's
    /// writes), and ingest while it runs slows down by that much at most, not by half. Each chunk is a
    /// narrow range of keys, so each page of the table is written about once a merge.
    static func write<Entry: Sendable>(
        _ sorted: [Entry], chunk: Int, into backend: SQLiteBackend,
        _ body: @escaping @Sendable (ArraySlice<Entry>, SQLiteConnection) throws -> Void
    ) async throws {
        var lastChunk = Duration.zero
        var start = 0
        let clock = ContinuousClock()
        while start < sorted.count {
            try Task.checkCancellation()
            let slice = sorted[start..<min(start + chunk, sorted.count)]
            start += slice.count
            if start > slice.count { try await Task.sleep(for: lastChunk * 2) }
            let began = clock.now
            defer { lastChunk = clock.now - began }
            try await backend.writeNow { connection in try body(slice, connection) }
        }
    }

    /// Calls `free` with `entries` a slice at a time: a few million removals behind a lock that
    /// every lookup takes held the writer for 0.29 s at 50 M events. The lock does not queue its
    /// waiters, so each slice is followed by a pause as long as it took (and by `between`, for
    /// tests).
    static func free<Entry>(
        _ entries: [Entry], slice: Int, between: (@Sendable () async -> Void)?, _ free: (ArraySlice<Entry>) -> Void
    ) async {
        let clock = ContinuousClock()
        for start in stride(from: 0, to: entries.count, by: slice) {
            if start > 0, let between { await between() }
            let began = clock.now
            free(entries[start..<min(start + slice, entries.count)])
            try? await Task.sleep(for: clock.now - began)
        }
    }
}

/// The background task that merges keys from memory into their table (``MessageKeyIndex``,
/// ``SessionKeys``): one at a time, stopped before the database closes.
final class MergeTask: Sendable {
    private let running = Locked<Task<Void, Never>?>(nil)
    private let stoppedFlag = Locked(false)
    /// What is merged, for the log.
    private let what: String

    init(merging what: String) {
        self.what = what
    }

    /// Whether ``stop()`` was called: no merge starts, and a long scan stops at its next check.
    var stopped: Bool { stoppedFlag.value }

    /// Runs `merge`, then again while `again()` claims another (keys recorded meanwhile may make
    /// one due: it runs now, not at the next write, and a wait for this merge waits for it too).
    /// The caller has claimed the first.
    func start(
        logger: Logger, merge: @escaping @Sendable () async throws -> Void, again: @escaping @Sendable () -> Bool
    ) {
        running.withLock { running in
            running = Task { [what] in
                do {
                    try await merge()
                    while again() { try await merge() }
                } catch is CancellationError {
                    // The store is closing: the next start merges these keys.
                } catch {
                    logger.warning("merging \(what) failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Waits for the merge started last, if any, to finish.
    func wait() async {
        await running.withLock { $0 }?.value
    }

    /// Stops a merge in progress after its current transaction (before the database closes; the
    /// watermark stays, so the next start merges those keys again).
    func stop() async {
        stoppedFlag.withLock { $0 = true }
        let task = running.withLock { $0 }
        task?.cancel()
        await task?.value
    }
}
