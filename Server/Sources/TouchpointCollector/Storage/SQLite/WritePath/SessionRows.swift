import TouchpointCore

/// How SQLite's writer adds a write's sessions to their `sessions` rows.
///
/// A session's row is found by (source, session id) through its key (``SessionKeys``: in memory,
/// or in `session_keys`, each row found compared on the id), and a new session's row is made at
/// the end of the table. At millions of sessions the pages of a lookup are no longer all in the
/// writer's 4 MB cache (before schema 19, 20,000 web events into a 50-million-event store made the
/// writer read 12,300 pages back from the operating system, 8,900 of them the index the lookups
/// went through then). A session's events come in over minutes, so the writer remembers the rowid
/// of each session it wrote to recently (``RecentHashes``, 262,144 slots) and adds the next share
/// of that session to the row by its rowid, checking that the row is still that session's:
/// retention and the deletion of a user's data delete rows (and SQLite can give a deleted newest
/// rowid again), and a write that rolled back leaves a rowid that no row has. A session it has no
/// rowid for, or whose check fails, is looked up by its key. A reader looks up, before the write,
/// the sessions it does not remember (``unremembered(in:)``), so that the pages are in memory by
/// the time the writer needs them.
///
/// A session's user id and anonymous id are the columns of `sessions_user` and
/// `sessions_anonymous`, so they are set by statements of their own, and only where they change:
/// the statement that adds a rollup says whether the row's user id differs from the rollup's and
/// whether it lacks an anonymous id (most writes change neither, and each such statement was one
/// more lookup of the row per session per write).
///
/// `sessions_recent` (the newest sessions first, the active ones, those retention deletes) holds
/// the minute of a session's last event (`last_minute`), not its time: SQLite rewrites an index
/// entry whenever an update sets one of its columns, so an index on `last_timestamp` took a
/// delete and an insert for each session of each write (about a session per event in web
/// traffic). `last_minute` is set only when a write moves the last event to another minute.
final class SessionRows: Sendable {
    /// Where a session's row is found by its id (``SessionKeys``).
    let keys: SessionKeys
    private let recent = Locked(RecentHashes<Int64>(slots: 1 << 18))
    /// Sessions added to by remembered rowid (for tests).
    private let rowidUpdates = Locked(0)
    /// Sessions whose rows a reader found before the write (for tests).
    private let foundAhead = Locked(0)
    /// Sessions whose entry in `sessions_recent` moved to a later minute (for tests).
    private let minuteMoves = Locked(0)
    /// User or anonymous ids set on rows that had another or none (for tests).
    private let idChanges = Locked(0)

    init(keys: SessionKeys) {
        self.keys = keys
    }

    /// Adds each rollup to its session's row, creating the rows of new sessions, in the writer's
    /// transaction.
    /// - Returns: per rollup, its row's rowid (the session's key in `events`) and whether the row
    ///   is new (holds only this write's events).
    func add(_ sessions: [SessionRollup], on connection: SQLiteConnection) throws -> [(rowid: Int64, isNew: Bool)] {
        let hashes = sessions.map { $0.key.hashValue }
        let remembered = recent.withLock { recent in hashes.map { recent[$0] } }
        var added = [(rowid: Int64, isNew: Bool)?](repeating: nil, count: sessions.count)
        // The rows whose last event moved to a later minute, and those whose ids change.
        var newMinute: [Int64] = []
        var newUser: [(rowid: Int64, userId: String)] = []
        var newAnonymous: [(rowid: Int64, anonymousId: String)] = []
        func idsChange(_ index: Int, rowid: Int64, from statement: SQLiteStatement, at column: Int32) {
            let session = sessions[index]
            if let userId = session.userId, statement.integer(column) != 0 { newUser.append((rowid, userId)) }
            if let anonymousId = session.anonymousId, statement.integer(column + 1) != 0 {
                newAnonymous.append((rowid, anonymousId))
            }
        }
        // Adds a rollup to the row `rowid` when that row is the session's.
        func addByRowid(_ tries: [(index: Int, rowid: Int64)]) throws {
            try connection.queryEach(
                Self.sqliteAddByRowid, tries,
                bind: { attempt, statement in
                    let session = sessions[attempt.index]
                    try statement.bind(1, session.firstTimestamp)
                    try statement.bind(2, session.lastTimestamp)
                    try statement.bind(3, session.eventCount)
                    try statement.bind(4, attempt.rowid)
                    try statement.bind(5, session.source)
                    try statement.bind(id: 6, session.sessionId, packed: session.packedId)
                    try statement.bind(7, session.userId)
                    try statement.bind(8, session.anonymousId == nil ? nil : Int64(1))
                },
                row: { attempt, statement in
                    added[attempt.index] = (attempt.rowid, statement.integer(0) == sessions[attempt.index].eventCount)
                    if statement.integer(1) != 0 { newMinute.append(attempt.rowid) }
                    idsChange(attempt.index, rowid: attempt.rowid, from: statement, at: 2)
                })
        }
        try addByRowid(sessions.indices.compactMap { index in remembered[index].map { (index, $0) } })
        let updated = added.count { $0 != nil }
        // The others by their keys: the rows that may be theirs, each compared.
        let rest = sessions.indices.filter { added[$0] == nil }
        let keyOfRest = rest.map { keys.key(sessions[$0].source, sessions[$0].sessionId) }
        let candidates = try keys.candidates(keyOfRest, on: connection)
        try addByRowid(zip(rest, candidates).flatMap { index, rowids in rowids.map { (index, $0) } })
        // Those with no row yet: new sessions.
        let new = rest.indices.filter { added[rest[$0]] == nil }
        let rowids = try connection.insertEach(Self.sqliteInsert, new) { position, statement in
            let session = sessions[rest[position]]
            try statement.bind(1, session.source)
            try statement.bind(id: 2, session.sessionId, packed: session.packedId)
            try statement.bind(3, session.userId)
            try statement.bind(4, session.anonymousId)
            try statement.bind(5, session.firstTimestamp)
            try statement.bind(6, session.lastTimestamp)
            try statement.bind(7, session.eventCount)
        }
        var recorded: [(key: Int64, row: Int64)] = []
        for (position, rowid) in zip(new, rowids) {
            guard let rowid else { continue }
            added[rest[position]] = (rowid, true)
            recorded.append((keyOfRest[position], rowid))
        }
        try keys.record(recorded, on: connection)
        _ = try connection.executeEach(Self.sqliteMoveMinute, newMinute) { rowid, statement in
            try statement.bind(1, rowid)
        }
        _ = try connection.executeEach(Self.sqliteSetUser, newUser) { change, statement in
            try statement.bind(1, change.userId)
            try statement.bind(2, change.rowid)
        }
        _ = try connection.executeEach(Self.sqliteSetAnonymous, newAnonymous) { change, statement in
            try statement.bind(1, change.anonymousId)
            try statement.bind(2, change.rowid)
        }
        if !newUser.isEmpty || !newAnonymous.isEmpty { idChanges.withLock { $0 += newUser.count + newAnonymous.count } }
        if !newMinute.isEmpty { minuteMoves.withLock { $0 += newMinute.count } }
        recent.withLock { recent in
            for index in rest { recent[hashes[index]] = added[index]?.rowid }
        }
        rowidUpdates.withLock { $0 += updated }
        return try added.map { added in
            guard let added else {
                throw StorageError(code: .database, message: "SQLite returned no sessions row for a session it stored")
            }
            return added
        }
    }

    /// A session of a write that the writer does not remember, for a reader to look up first.
    struct Unremembered: Sendable {
        var hash: Int
        var source: String
        var id: String
        var packed: PackedID.Bytes?
    }

    /// The sessions of `rows` that the writer does not remember, each once, for a reader to look
    /// up before the rows reach the writer (``find(_:on:)``, then ``remember(_:)``).
    ///
    /// In a large store the lookups' pages no longer fit in memory, and the writer, which runs one
    /// write at a time, waited on the disk for the pages of each session it did not remember (in
    /// web traffic about one event in sixteen starts a session, which is looked up too; at 50
    /// million events those pages were often not cached). Looked up first, on one of the readers
    /// and in parallel with the writer, the pages are in memory when the writer needs them, for a
    /// session found (added to by rowid) and a new one (found nowhere) alike.
    func unremembered(in rows: [SQLiteEventWriter.Row]) -> [Unremembered] {
        recent.withLock { recent in
            var seen = Set<Int>()
            var wanted: [Unremembered] = []
            for row in rows {
                guard let session = row.session else { continue }
                let hash = session.hashValue
                guard recent[hash] == nil, seen.insert(hash).inserted else { continue }
                wanted.append(
                    Unremembered(hash: hash, source: session.source, id: session.id, packed: row.packedSessionId))
            }
            return wanted
        }
    }

    /// Looks `sessions` up (on a reader connection) by their keys (``SessionKeys``), each row
    /// found compared on the session's id.
    /// - Returns: the rowids of those that have a row.
    func find(_ sessions: [Unremembered], on connection: SQLiteConnection) throws -> [(hash: Int, rowid: Int64)] {
        let candidates = try keys.candidates(sessions.map { keys.key($0.source, $0.id) }, on: connection)
        var found: [(hash: Int, rowid: Int64)] = []
        try connection.queryEach(
            Self.sqliteIsSession, zip(sessions, candidates).flatMap { session, rowids in rowids.map { (session, $0) } },
            bind: { attempt, statement in
                try statement.bind(1, attempt.1)
                try statement.bind(2, attempt.0.source)
                try statement.bind(id: 3, attempt.0.id, packed: attempt.0.packed)
            },
            row: { attempt, _ in found.append((attempt.0.hash, attempt.1)) })
        return found
    }

    /// Remembers the rowids a reader found (``find(_:on:)``). Each is a hint like any other
    /// remembered rowid (checked against the row before use), so a session deleted or created
    /// since costs nothing but the hint.
    func remember(_ found: [(hash: Int, rowid: Int64)]) {
        guard !found.isEmpty else { return }
        recent.withLock { recent in
            // What the writer remembered meanwhile is newer than what the reader saw.
            for session in found where recent[session.hash] == nil { recent[session.hash] = session.rowid }
        }
        foundAhead.withLock { $0 += found.count }
    }

    /// Whether a row is a session's.
    private static let sqliteIsSession =
        "SELECT 1 FROM sessions WHERE session_key = ? AND source = ? AND session_id = ?"

    /// Sessions added to by remembered rowid so far (for tests).
    var addedByRowid: Int { rowidUpdates.value }

    /// Sessions whose rows a reader found before their write so far (for tests).
    var foundBeforeTheWrite: Int { foundAhead.value }

    /// Sessions whose entry in `sessions_recent` moved to a later minute so far (for tests).
    var movedToLaterMinute: Int { minuteMoves.value }

    /// User or anonymous ids set on existing rows so far, each counted once (for tests).
    var idsSet: Int { idChanges.value }

    /// Whether the row's user id is another than the rollup's (`?`, nil: none to set), and
    /// whether it has no anonymous id where the rollup has one (`?`): the two columns after the
    /// others a statement that adds a rollup returns.
    private static func idsBehind(user: String, anonymous: String) -> String {
        "\(user) IS NOT NULL AND user_id IS NOT \(user), \(anonymous) IS NOT NULL AND anonymous_id IS NULL"
    }

    /// Whether a row's `last_minute` (what `sessions_recent` holds) is behind its last event's.
    private static let minuteBehind = "last_minute IS NOT last_timestamp / 60000"

    /// Adds one rollup to the row with a remembered rowid when that row is still the session's
    /// (through the table itself, not the index), and returns its count of events, whether its
    /// last event moved to another minute and whether its ids are behind the rollup's
    /// (``idsBehind(user:anonymous:)``: the rollup's user id, and 1 when it has an anonymous id).
    static let sqliteAddByRowid = """
        UPDATE sessions SET first_timestamp = MIN(first_timestamp, ?), last_timestamp = MAX(last_timestamp, ?), \
        event_count = event_count + ? WHERE rowid = ? AND source = ? AND session_id = ? \
        RETURNING event_count, \(minuteBehind), \(idsBehind(user: "?7", anonymous: "?8"))
        """

    /// Creates the row of a new session (found by no key).
    private static let sqliteInsert = """
        INSERT INTO sessions \
        (source, session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count, last_minute) \
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?6 / 60000)
        """

    /// Moves a row's entry in `sessions_recent` to the minute of its last event: run only when
    /// that minute changed, since SQLite rewrites an index entry whenever a statement sets its
    /// column, changed or not.
    private static let sqliteMoveMinute = "UPDATE sessions SET last_minute = last_timestamp / 60000 WHERE rowid = ?"

    /// The newest user id of a session (as `sessionMerge`), set on a row whose user id is another.
    private static let sqliteSetUser = "UPDATE sessions SET user_id = ? WHERE rowid = ?"

    /// The first anonymous id of a session (as `sessionMerge`), set on a row that has none.
    private static let sqliteSetAnonymous = "UPDATE sessions SET anonymous_id = ? WHERE rowid = ?"
}
