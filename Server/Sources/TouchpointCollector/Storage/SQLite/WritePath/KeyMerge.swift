import Logging
import TouchpointCore

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
