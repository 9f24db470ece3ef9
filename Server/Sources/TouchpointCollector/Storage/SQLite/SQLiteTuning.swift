/// What tests change in SQLite's storage, in one value whose defaults are production's
/// (``production``): the sizes of the key merges, a key function of their own, a flush that
/// fails, whether the store merges as it opens and whether a reader looks sessions up ahead.
struct SQLiteTuning: Sendable {
    /// Message keys held in memory before they are merged, at least (``MessageKeyIndex``).
    var minimumMerge = 250_000
    /// The most message keys one merge takes.
    var maximumMerge = 4_000_000
    /// A message key function in place of the database's (nil: the database's).
    var keyOverride: MessageKeyIndex.KeyFunction? = nil
    /// Message keys freed from memory per hold of the lock after a merge.
    var freeSlice = 16_384
    /// Whether a store that holds message keys builds their filter (when none was saved for it)
    /// and merges a due backlog as soon as it opens, rather than at its first write.
    var mergeAtStart = true
    /// What flushes the WAL in place of `fsync` (``WALSync``; nil: `fsync`).
    var flush: WALSync.Flush? = nil
    /// Whether a reader looks up a request's sessions and keys before its write
    /// (``SQLiteEventWriter/lookAhead(_:)``).
    var sessionsLookedUpAhead = true
    /// Session keys held in memory before they are merged, at least, and the most one merge takes
    /// (``SessionKeys``).
    var sessionMerge: (minimum: Int, maximum: Int) = (50_000, 1_000_000)

    /// What a collector runs with.
    static let production = SQLiteTuning()
}
