import Foundation
import Logging
import NIOPosix
import TouchpointCore

/// How SQLite stores each (source, messageId) once without a random insert into an index per event.
///
/// A unique index on the ids themselves took each new event at a random place (most senders'
/// message ids are random v4 UUIDs), so every commit rewrote a 4 KB index page per event it
/// held: ingest with random ids ran at half the speed of time-ordered ones. Instead:
///
/// - Each event has a 64-bit key (``MessageKey``, keyed by a secret of the database's).
/// - `message_keys (key, seq)`, ordered by key, holds the keys of all events up to a watermark
///   (`storage_settings.message_keys_merged_through`). It is only read on the hot path. A key is
///   stored with its event's era (``storedKey(_:seq:)``) in its top byte: the table is a run of
///   eras, each in key order, and a merge writes into the pages of its keys' era only, so the
///   pages a merge rewrites stay those of one era (16,777,216 events) however large the store
///   grows. A lookup seeks the key in each era (one seek each, and only when the filter passes
///   the key), and as it is (the keys merged before eras, schema 16 and earlier, up to
///   `storage_settings.message_keys_raw_through`).
/// - The keys of the events after the watermark are held in memory here (the events table itself
///   is their durable copy: they are read back from it when the collector starts).
/// - Now and then the keys in memory are merged into `message_keys` in key order, a few thousand
///   per transaction between ingest writes, so each page of the table is written once per merge
///   rather than once per event; then the watermark moves and memory is freed.
///
/// A new event is looked up by key in memory and, when ``MessageKeyFilter`` (a Bloom filter over
/// the table's keys, saved beside the database for the next start, or built in the background as
/// a store without it opens) has seen its key or is not built yet, in
/// `message_keys`; any event found with that key is compared on the full (source, messageId), so
/// two ids that share a key are both stored. A trigger forgets the key of
/// a deleted event (one deleted before its key was merged leaves the key behind: 16 bytes that no
/// lookup mistakes for an event; the filter keeps its bits, which only costs that key a lookup).
final class MessageKeyIndex: Sendable {
    /// A key function: (source, messageId) → key.
    typealias KeyFunction = @Sendable (_ source: String, _ messageId: String) -> Int64

    /// The key function of this database (a test may give one that makes ids share keys).
    let key: KeyFunction

    private struct State {
        /// The last seq whose key was merged before eras: such keys are in the table as they are
        /// (0: none).
        var rawThrough: Int64 = 0
        /// Keys of the events after the watermark, with their seqs.
        var recent = KeysInMemory()
        /// The last seq whose key is in `message_keys`.
        var mergedThrough: Int64 = 0
        var isMerging = false
        /// Keys recorded while a merge runs (a deleted newest event's seq can be given again, so
        /// one of them may fall at or below the merge's watermark).
        var recordedWhileMerging: [(key: Int64, seq: Int64)] = []
        /// Every key in `message_keys` and a few more (nil until built).
        var filter: MessageKeyFilter?
        /// Keys looked up in `message_keys` (for tests).
        var tableLookups = 0
        /// Stored forms of keys read ahead (for tests).
        var formsReadAhead = 0
        /// The filter as last saved beside the database or loaded from there: its keys, capacity
        /// and watermark (nil: none).
        var savedFilter: SavedFilter?
    }

    /// What identifies a saved filter's content.
    private struct SavedFilter: Equatable {
        var count: Int
        var capacity: Int
        var watermark: Int64
    }

    private let state: Locked<State>
    /// Keys in memory before a merge starts, at least.
    let minimumMerge: Int
    /// Keys in memory before a merge starts, at most (bounds the memory: about 40 bytes a key), and
    /// the most one merge takes: a backlog (a store restarted after a burst) is merged in slices of
    /// the oldest keys, each moving the watermark, so that what a slice merged outlives a restart.
    let maximumMerge: Int
    /// Keys per merge transaction.
    let mergeChunk: Int
    /// Keys freed from memory per hold of the lock after a merge (16,384 by default: about 1 ms).
    let freeSlice: Int
    /// Where the filter is saved for the next start (nil: nowhere), and what names the database
    /// in it (``MessageKeyFilter/save(to:identity:watermark:)``).
    let filterFile: String?
    private let identity: Int64
    private let logger: Logger?

    init(
        key: @escaping KeyFunction, mergedThrough: Int64, rawThrough: Int64 = 0, minimumMerge: Int,
        maximumMerge: Int = 4_000_000, freeSlice: Int = 16_384, filterFile: String? = nil, identity: Int64 = 0,
        logger: Logger? = nil
    ) {
        self.key = key
        self.filterFile = filterFile
        self.identity = identity
        self.logger = logger
        state = Locked(State(rawThrough: rawThrough, mergedThrough: mergedThrough))
        self.minimumMerge = minimumMerge
        self.maximumMerge = max(minimumMerge, maximumMerge)
        mergeChunk = 4096
        self.freeSlice = max(1, freeSlice)
    }

    // MARK: Opening

    static let secretName = "message_key_secret"
    /// Appended to the database file's path: where the filter over its message keys is saved for
    /// the next start (``saveFilter()``).
    static let filterFileSuffix = "-keyfilter"
    static let watermarkName = "message_keys_merged_through"
    static let rawThroughName = "message_keys_raw_through"

    // MARK: Eras

    /// Seqs per era: 2^24 = 16,777,216.
    static let eraShift: Int64 = 24
    /// The most eras (the top byte of a stored key); the seqs after the last era's start all
    /// fall in it.
    static let lastEra: Int64 = 255
    /// The bits of a key kept below its era.
    static let keyMask: Int64 = (1 << 56) - 1

    /// The era of the event `seq`: 1 for the first 2^24 seqs, 2 for the next, and so on.
    static func era(ofSeq seq: Int64) -> Int64 { min(lastEra, 1 + (max(seq, 0) >> eraShift)) }

    /// `key` as `message_keys` stores it for the event `seq`: its era in the top byte, the key's
    /// low 56 bits below (two keys that differ only in their top byte then share a stored key, and
    /// both events are compared, as with any two ids that share a key).
    static func storedKey(_ key: Int64, seq: Int64) -> Int64 { storedKey(key, era: era(ofSeq: seq)) }

    /// `key` as `message_keys` stores it in era `era`. (The trigger that forgets a deleted event's
    /// key works the same out in SQL, as schema 17 wrote it: a change here is a new migration.)
    static func storedKey(_ key: Int64, era: Int64) -> Int64 { (era << 56) | (key & keyMask) }

    /// Reads the database's secret and watermark, and the keys of the events after the watermark.
    /// - Parameters:
    ///   - minimumMerge: keys in memory before a merge, at least.
    ///   - maximumMerge: keys in memory before a merge, at most, and the most one merge takes.
    ///   - keyOverride: for tests, a key function in place of the database's (keys of the events
    ///     after the watermark are then computed with it too).
    ///   - freeSlice: keys freed from memory per hold of the lock after a merge (tests make it small).
    ///   - filterFile: where the filter is saved for the next start (``saveFilter()``); one
    ///     saved there for this database and its watermark is taken now.
    static func load(
        _ connection: SQLiteConnection, minimumMerge: Int = 250_000, maximumMerge: Int = 4_000_000,
        keyOverride: KeyFunction? = nil, freeSlice: Int = 16_384, filterFile: String? = nil, logger: Logger? = nil
    ) throws -> MessageKeyIndex {
        var secret: [UInt8] = []
        var mergedThrough: Int64 = 0
        var rawThrough: Int64 = 0
        try connection.queryEach(
            "SELECT name, value FROM storage_settings WHERE name IN (?, ?, ?)", [()],
            bind: { _, statement in
                try statement.bind(1, secretName)
                try statement.bind(2, watermarkName)
                try statement.bind(3, rawThroughName)
            },
            row: { _, statement in
                switch statement.bytes(0) {
                case Array(secretName.utf8): secret = statement.bytes(1)
                case Array(watermarkName.utf8): mergedThrough = statement.integer(1)
                default: rawThrough = statement.integer(1)
                }
            })
        guard let key = MessageKey(secret: secret) else {
            throw StorageError(
                code: .corruptRow,
                message:
                    "the database's storage_settings table has no 16-byte \(secretName), which deduplication needs: the file was changed outside the collector; restore it from a backup"
            )
        }
        let function = keyOverride ?? { source, messageId in key(source: source, messageId: messageId) }
        let index = MessageKeyIndex(
            key: function, mergedThrough: mergedThrough, rawThrough: rawThrough, minimumMerge: minimumMerge,
            maximumMerge: maximumMerge, freeSlice: freeSlice, filterFile: filterFile,
            identity: key(source: "touchpoint", messageId: "the message key filter's database"), logger: logger)
        if keyOverride == nil {
            try connection.queryEach(
                "SELECT touchpoint_message_key(?, source, message_id), seq FROM events WHERE seq > ? ORDER BY seq",
                [()],
                bind: { _, statement in
                    try statement.bind(blob: 1, secret)
                    try statement.bind(2, mergedThrough)
                },
                row: { _, statement in index.record(statement.integer(0), seq: statement.integer(1)) })
        } else {
            try connection.queryEach(
                "SELECT source, message_id, seq FROM events WHERE seq > ? ORDER BY seq", [()],
                bind: { _, statement in try statement.bind(1, mergedThrough) },
                row: { _, statement in
                    let row = statement.row()
                    index.record(function(row[0].text ?? "", row[1].text ?? ""), seq: statement.integer(2))
                })
        }
        index.restoreFilter()
        return index
    }

    // MARK: The hot path

    /// The events stored before with each row's (source, messageId), on the writer's connection.
    /// - Returns: per row, its key and whether an event with its (source, messageId) is stored.
    func lookUp(_ rows: [SQLiteEventWriter.Row], on connection: SQLiteConnection) throws -> [(key: Int64, stored: Bool)]
    {
        var keys = rows.map { (key: $0.messageKey, stored: false) }
        // Where to look: the events with the key, in memory and in the table (unless the filter
        // says the table has no such key): there, in each era merged so far, and as it is when
        // keys were merged before eras.
        var candidates: [(row: Int, seq: Int64)] = []
        var probes: [(row: Int, stored: Int64)] = []
        state.withLock { state in
            for (row, entry) in keys.enumerated() {
                if state.filter?.mayContain(entry.key) ?? true {
                    Self.forEachStoredForm(
                        of: entry.key, mergedThrough: state.mergedThrough, rawThrough: state.rawThrough
                    ) { probes.append((row, $0)) }
                    state.tableLookups += 1
                }
                state.recent.forEachRow(of: entry.key) { candidates.append((row, $0)) }
            }
        }
        try connection.queryEach(
            Self.sqliteProbe, probes,
            bind: { probe, statement in try statement.bind(1, probe.stored) },
            row: { probe, statement in candidates.append((probe.row, statement.integer(0))) })
        guard !candidates.isEmpty else { return keys }
        // Same key: the same message only when the full (source, messageId) is (the id packed or not).
        try connection.queryEach(
            "SELECT 1 FROM events WHERE seq = ? AND source = ? AND touchpoint_id(message_id) = ?", candidates,
            bind: { candidate, statement in
                try statement.bind(1, candidate.seq)
                try statement.bind(2, rows[candidate.row].source)
                try statement.bind(3, rows[candidate.row].message.messageId)
            },
            row: { candidate, _ in keys[candidate.row].stored = true })
        return keys
    }

    /// The forms `key` may be stored in, in `message_keys`: with each era merged so far, and as it
    /// is when keys were merged before eras (unless that is one of the others: its top byte an
    /// era's).
    private static func forEachStoredForm(
        of key: Int64, mergedThrough: Int64, rawThrough: Int64, _ body: (Int64) -> Void
    ) {
        let eras: Range<Int64> = 1..<(mergedThrough > 0 ? era(ofSeq: mergedThrough) + 1 : 1)
        for era in eras { body(storedKey(key, era: era)) }
        if rawThrough > 0, !eras.contains(Int64(UInt64(bitPattern: key) >> 56)) { body(key) }
    }

    /// One stored form of a key looked up in `message_keys`.
    private static let sqliteProbe = "SELECT seq FROM message_keys WHERE key = ?"

    /// The stored forms of the keys of `rows` that a lookup would read in `message_keys` now (the
    /// keys the filter passes; none before it is built, when every key would be). Changes no count.
    func storedFormsToReadAhead(_ rows: [SQLiteEventWriter.Row]) -> [Int64] {
        let keys = rows.map(\.messageKey)
        return state.withLock { state in
            guard let filter = state.filter else { return [] }
            var forms: [Int64] = []
            for key in keys where filter.mayContain(key) {
                Self.forEachStoredForm(of: key, mergedThrough: state.mergedThrough, rawThrough: state.rawThrough) {
                    forms.append($0)
                }
            }
            return forms
        }
    }

    /// Reads, on a reader connection and before the writer does, what the writer's lookup of the
    /// keys of `rows` will read in `message_keys` (``storedFormsToReadAhead(_:)``): what it finds
    /// is of no use but to bring the pages into memory for the writer. In a store larger than
    /// memory each such read went to the disk on the writer's thread (at 50 million events, 0.2 %
    /// of new keys, each in four eras).
    func readAhead(_ rows: [SQLiteEventWriter.Row], on connection: SQLiteConnection) throws {
        let forms = storedFormsToReadAhead(rows)
        try connection.queryEach(
            Self.sqliteProbe, forms, bind: { form, statement in try statement.bind(1, form) }, row: { _, _ in })
        state.withLock { $0.formsReadAhead += forms.count }
    }

    /// Stored forms of keys read ahead so far (``readAhead(_:on:)``; for tests).
    var formsReadAhead: Int { state.withLock { $0.formsReadAhead } }

    /// Notes that the event `seq` has key `key` (called inside the transaction that stores it: a
    /// key in memory whose event was rolled back is harmless, as each one found is compared).
    func record(_ key: Int64, seq: Int64) {
        state.withLock { state in
            state.recent.insert(key, row: seq)
            if state.isMerging { state.recordedWhileMerging.append((key, seq)) }
        }
    }

    /// Keys held in memory (for tests and the merge's trigger).
    var keysInMemory: Int { state.withLock { $0.recent.count } }

    /// The last seq whose key is in `message_keys`.
    var mergedThrough: Int64 { state.withLock { $0.mergedThrough } }

    /// New events' keys looked up in `message_keys` so far: those the filter passed (all of them
    /// while it is not built).
    var tableLookups: Int { state.withLock { $0.tableLookups } }

    /// The keys the filter over `message_keys` is sized for (nil: not built yet).
    var filterCapacity: Int? { state.withLock { $0.filter?.capacity } }

    /// For `/metrics` (Prometheus text format 0.0.4): the keys held in memory until the next
    /// merge, the keys looked up in `message_keys` (over `touchpoint_sqlite_write_rows_total`, the
    /// share of new events that cost a read of the table: the filter's false positives, about
    /// 0.25–1.1 %, once it is built), and the filter's keys and capacity (past its capacity its false
    /// positives grow until a merge builds a larger one).
    func prometheusText() -> String {
        let (inMemory, lookups, filterKeys, filterCapacity) = state.withLock { state in
            (state.recent.count, state.tableLookups, state.filter?.count ?? 0, state.filter?.capacity ?? 0)
        }
        return """
            # HELP touchpoint_message_keys_in_memory Message keys of stored events held in memory until the next merge into message_keys.
            # TYPE touchpoint_message_keys_in_memory gauge
            touchpoint_message_keys_in_memory \(inMemory)
            # HELP touchpoint_message_key_table_lookups_total New events' message keys looked up in message_keys (the filter passed them, or was not built).
            # TYPE touchpoint_message_key_table_lookups_total counter
            touchpoint_message_key_table_lookups_total \(lookups)
            # HELP touchpoint_message_key_filter_keys Keys given to the filter over message_keys (0: not built yet).
            # TYPE touchpoint_message_key_filter_keys gauge
            touchpoint_message_key_filter_keys \(filterKeys)
            # HELP touchpoint_message_key_filter_capacity Keys the filter over message_keys is sized for (0: not built yet).
            # TYPE touchpoint_message_key_filter_capacity gauge
            touchpoint_message_key_filter_capacity \(filterCapacity)

            """
    }

    // MARK: Merging

    private let task = MergeTask(merging: "message keys")
    /// For tests: awaited by a merge after it has taken the keys it moves, before its first
    /// transaction (so that a test can write and delete while a merge is under way).
    let afterSnapshot = Locked<(@Sendable () async -> Void)?>(nil)
    /// For tests: awaited by a merge between the slices of keys it frees from memory.
    let betweenFreedSlices = Locked<(@Sendable () async -> Void)?>(nil)

    /// Starts a merge in the background when one is due (``claimMerge()``): its transactions take
    /// turns with the writes that follow.
    func mergeIfDue(into backend: SQLiteBackend, logger: Logger) {
        guard claimMerge() else { return }
        task.start(logger: logger) {
            try await self.merge(into: backend, logger: logger)
        } again: {
            self.claimMerge(onlyWhenDue: true)
        }
    }

    /// Waits for the merge started last, if any, to finish.
    func waitForMerge() async { await task.wait() }

    /// Stops a merge in progress after its current transaction (before the database closes; the
    /// watermark stays, so the next start merges those keys again).
    func stopMerging() async { await task.stop() }

    /// Whether enough keys are in memory to merge them, or (unless `onlyWhenDue`) the filter is to
    /// be built, and no merge runs: then marks one as running (the caller must run ``merge(into:)``).
    func claimMerge(onlyWhenDue: Bool = false) -> Bool {
        guard !task.stopped else { return false }
        return state.withLock { state in
            guard !state.isMerging, isMergeDue(state) || (!onlyWhenDue && state.filter?.isFull ?? true) else {
                return false
            }
            state.isMerging = true
            return true
        }
    }

    /// Whether enough keys are in memory to merge them: an eighth of the table's, within the bounds.
    private func isMergeDue(_ state: State) -> Bool {
        state.recent.count >= min(maximumMerge, max(minimumMerge, Int(state.mergedThrough / 8)))
    }

    /// Builds the filter when there is none yet (first: until it is built, every new key reads the
    /// table), moves keys from memory into `message_keys` when enough are (``mergeKeys(into:)``),
    /// then builds the filter again when it holds more keys than it was sized for.
    func merge(into backend: SQLiteBackend, logger: Logger? = nil) async throws {
        defer {
            state.withLock { state in
                state.isMerging = false
                state.recordedWhileMerging = []
            }
        }
        if state.withLock({ $0.filter == nil }) {
            try await buildFilter(from: backend, logger: logger)
        }
        if state.withLock({ isMergeDue($0) }) {
            try await mergeKeys(into: backend)
        }
        if state.withLock({ $0.filter?.isFull ?? true }) {
            try await buildFilter(from: backend, logger: logger)
        }
    }

    /// Moves the oldest keys in memory (at most ``maximumMerge``) into `message_keys`, in key order,
    /// `mergeChunk` per transaction, then moves the watermark and frees them. Ingest writes go on
    /// between the transactions; a key is in memory or in the table (or both) throughout, and in the
    /// filter before the table.
    /// A crash part-way leaves the watermark where it was: the next start reads those keys again,
    /// and the table ignores the ones it has.
    private func mergeKeys(into backend: SQLiteBackend) async throws {
        // Behind the lock, which every lookup takes (4 M keys: about 40 ms a pass); only the slice
        // is copied, so a backlog of many millions costs no copy of all of them.
        let entries = state.withLock { [maximumMerge] state in
            state.recordedWhileMerging = []
            return state.recent.oldestEntries(atMost: maximumMerge)
        }
        guard let through = entries.map(\.row).max() else { return }
        if let pause = afterSnapshot.value { await pause() }
        // In the table's order: by stored key (era, then key), sorted in place (a slice is
        // millions of entries).
        var sorted = entries.map { (key: Self.storedKey($0.key, seq: $0.row), seq: $0.row) }
        sorted.sort { $0.key != $1.key ? $0.key < $1.key : $0.seq < $1.seq }
        try await KeyMerge.write(sorted, chunk: mergeChunk, into: backend) { [state] chunk, connection in
            // In the filter within the transaction that puts them in the table: lookups run on
            // this connection too, so none sees a key in the table and not in the filter.
            state.withLock { state in
                for entry in chunk { state.filter?.insert(entry.key) }
            }
            // Not checked against `events` (that read a scattered event row per key): the key of an
            // event deleted before its merge stays in the table, where a lookup that finds it finds
            // no event with its seq and so ignores it.
            _ = try connection.executeEach(
                "INSERT OR IGNORE INTO message_keys (key, seq) VALUES (?, ?)", chunk
            ) { entry, statement in
                try statement.bind(1, entry.key)
                try statement.bind(2, entry.seq)
            }
        }
        try await backend.writeNow { [state] connection in
            // Behind the writer's lock no event is being stored: the late keys are all recorded.
            let late = state.withLock { state in
                let late = state.recordedWhileMerging.filter { $0.seq <= through }
                for entry in late { state.filter?.insert(entry.key) }
                return late.map { (key: Self.storedKey($0.key, seq: $0.seq), seq: $0.seq) }
            }
            _ = try connection.executeEach("INSERT OR IGNORE INTO message_keys (key, seq) VALUES (?, ?)", late) {
                entry, statement in
                try statement.bind(1, entry.key)
                try statement.bind(2, entry.seq)
            }
            try connection.execute(
                "UPDATE storage_settings SET value = ? WHERE name = ?", [.int(through), .text(Self.watermarkName)])
        }
        // The table has them all now: lookups seek them there from here on, in their eras.
        state.withLock { $0.mergedThrough = max($0.mergedThrough, through) }
        // Freed a slice at a time (``KeyMerge/free(_:slice:between:_:)``); meanwhile a key is in
        // memory, in the table, or both.
        await KeyMerge.free(entries, slice: freeSlice, between: betweenFreedSlices.value) { slice in
            state.withLock { state in
                for entry in slice { state.recent.remove(entry.key, row: entry.row) }
            }
        }
    }

    /// Builds the filter from `message_keys` on a reader connection, sized for half as many keys
    /// again as the table holds and memory holds for it (and at least a merge's), and puts it in
    /// place of the one before.
    /// Runs while a merge is claimed, so no key enters the table meanwhile. The scan (seconds at
    /// tens of millions of keys, on a reader's thread, where the task's cancellation does not
    /// reach) stops within 65,536 keys of ``stopMerging()``.
    private func buildFilter(from backend: SQLiteBackend, logger: Logger?) async throws {
        let clock = ContinuousClock()
        let began = clock.now
        let inMemory = state.withLock { $0.recent.count }
        let filter = try await backend.read { [minimumMerge, task] connection in
            let count =
                Int(try connection.execute("SELECT COUNT(*) FROM message_keys", []).first?.first?.int ?? 0) + inMemory
            var filter = MessageKeyFilter(capacity: max(count + count / 2, minimumMerge))
            var scanned = 0
            try connection.queryEach(
                "SELECT key FROM message_keys", [()], bind: { _, _ in },
                row: { _, statement in
                    if scanned & 0xFFFF == 0, task.stopped { throw CancellationError() }
                    scanned += 1
                    filter.insert(statement.integer(0))
                })
            return filter
        }
        state.withLock { $0.filter = filter }
        logger?.info(
            "built the message key filter",
            metadata: [
                "keys": "\(filter.count)", "capacity": "\(filter.capacity)", "bytes": "\(filter.bytes)",
                "took": "\(clock.now - began)",
            ])
    }

    // MARK: The saved filter

    /// Takes the filter saved in ``filterFile`` when it was saved for this database with its
    /// watermark as it is now, and is intact: a start then needs no scan of `message_keys` before
    /// new keys skip it (at 50 M events the scan took 9 s, and ingest meanwhile read the table for
    /// every key). Any other file is removed, and a merge as the store opens builds the filter.
    ///
    /// Why a matching watermark is enough: keys enter `message_keys` only in a merge, each one in
    /// the filter first, and a merge's last transaction moves the watermark. So a filter saved at
    /// this watermark holds every key the table had then; the keys a merge stopped part-way put in
    /// the table since belong to events after the watermark, which are read back into memory at
    /// the start and found there; and the keys deleted since only cost a lookup each.
    private func restoreFilter() {
        guard let filterFile else { return }
        removeUnfinishedSaves(of: filterFile)
        let clock = ContinuousClock()
        let began = clock.now
        let watermark = mergedThrough
        let restored: Result<MessageKeyFilter, MessageKeyFilter.Rejection>?
        do {
            restored = try MessageKeyFilter.restored(fromFile: filterFile, identity: identity, watermark: watermark)
        } catch {
            logger?.warning("reading the saved message key filter failed", metadata: ["error": "\(error)"])
            return
        }
        switch restored {
        case nil:
            return
        case .success(let filter)?:
            state.withLock { state in
                state.filter = filter
                state.savedFilter = SavedFilter(count: filter.count, capacity: filter.capacity, watermark: watermark)
            }
            logger?.info(
                "loaded the saved message key filter",
                metadata: ["keys": "\(filter.count)", "bytes": "\(filter.bytes)", "took": "\(clock.now - began)"])
        case .failure(let rejection)?:
            logger?.notice(
                "the saved message key filter is not used, and is built again",
                metadata: ["file": "\(filterFile)", "reason": "\(rejection)", "watermark": "\(watermark)"])
            try? AtomicFile.remove(filterFile)
        }
    }

    /// Removes what a save cut short left beside `file` (its temporary files: tens of MB each, never
    /// read).
    private func removeUnfinishedSaves(of file: String) {
        let url = URL(fileURLWithPath: file)
        let prefix = url.lastPathComponent + ".tmp-"
        let directory = url.deletingLastPathComponent()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            try? AtomicFile.remove(directory.appendingPathComponent(name).path)
        }
    }

    /// Saves the filter in ``filterFile``, with the watermark it is complete for, when it changed
    /// since it was last saved or loaded; called when the store closes. A failure is logged: the
    /// next start builds the filter instead.
    ///
    /// Not after each merge as well: that would make a start after a crash as quick, but writes
    /// the whole filter (76 MB at 50 M events) every 4 M events, and in a trace the writes right
    /// after such a save read their pages slowly (0.12–0.21 s). On NIO's pool for blocking work:
    /// not on a thread of Swift's cooperative pool, nor on the checkpointer's, whose locked pass
    /// would wait behind it with writes held (0.21 s at 50 M).
    func saveFilter() async {
        guard let filterFile else { return }
        let snapshot = state.withLock { state -> (MessageKeyFilter, SavedFilter)? in
            guard let filter = state.filter else { return nil }
            let saved = SavedFilter(count: filter.count, capacity: filter.capacity, watermark: state.mergedThrough)
            return saved == state.savedFilter ? nil : (filter, saved)
        }
        guard let (filter, saved) = snapshot else { return }
        do {
            try await NIOThreadPool.singleton.runIfActive { [identity] in
                try filter.save(to: filterFile, identity: identity, watermark: saved.watermark)
            }
            state.withLock { $0.savedFilter = saved }
        } catch {
            logger?.warning(
                "saving the message key filter failed", metadata: ["file": "\(filterFile)", "error": "\(error)"])
        }
    }
}
