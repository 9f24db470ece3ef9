import TouchpointCore

/// The contexts SQLite keeps once instead of in every event (schema 14).
///
/// A web SDK sends the same library, locale and user agent with every call of a visit, and every
/// visitor on one browser sends the same ones: about 200 of a web event's 560 bytes. The members a
/// `track`, `page` or `screen` call's context holds beside `page` and `sessionId` (set apart by
/// ``StoredPayload/compact(_:columns:shareContext:unwrapProperties:)``) go into a row of `contexts`, unique by its
/// text, that the event names in `context_id`; reading an event puts them back.
///
/// A context gets its row the second time it is seen (in one write or two, as far as a table of
/// recent hashes remembers): one sent once stays in its event, so that no sender can make the
/// store larger than keeping every context inline would. Each row counts the events that name it;
/// the deletion of a user's data and retention take their events off, and a row that no event names
/// any more is deleted in the same transaction (a context can hold what identifies a person: an
/// IP address, a device id).
///
/// The writer remembers the id of each context row it added to recently, by the text's hash
/// (worked out on the request's task), and adds to that row by its id, checking its text; a
/// context it has no id for, or whose check fails (the row was deleted), is found by its text
/// through `contexts_body`.
///
/// PostgreSQL keeps every context inline: its writes run in parallel, and a row that they all
/// update would make them wait for each other's commits.
final class SharedContexts: Sendable {
    /// Hashes of contexts seen recently that have no row yet.
    private let seen = Locked(RecentHashes<Bool>(slots: 1 << 16))
    /// Ids of the rows of contexts added to recently, by the hash of their text.
    private let ids = Locked(RecentHashes<Int64>(slots: 1 << 12))
    /// Contexts added to by remembered id (for tests).
    private let idUpdates = Locked(0)

    /// Contexts added to by remembered id so far (for tests).
    var addedById: Int { idUpdates.value }

    /// Each new row's context: the `contexts` row that now names it, or nil to keep it inline.
    /// Runs in the writer's transaction, before the rows are inserted.
    /// - Parameters:
    ///   - new: the indices of the rows that will be stored.
    /// - Returns: per row of `rows`, the `contexts` row's id when its context is shared.
    func references(_ rows: [SQLiteEventWriter.Row], new: [Int], on connection: SQLiteConnection) throws -> [Int64?] {
        // Each distinct context once (by the hash the row carries), with the rows that carry it.
        var groups: [Body: Int] = [:]
        var bodies: [Body] = []
        var users: [[Int]] = []
        for index in new {
            guard let text = rows[index].stored.sharedContext else { continue }
            let body = Body(text: text, hash: rows[index].sharedContextHash)
            if let group = groups[body] {
                users[group].append(index)
            } else {
                groups[body] = bodies.count
                bodies.append(body)
                users.append([index])
            }
        }
        var references = [Int64?](repeating: nil, count: rows.count)
        guard !bodies.isEmpty else { return references }
        let remembered = self.ids.withLock { known in bodies.map { known[$0.hash] } }
        var ids = [Int64?](repeating: nil, count: bodies.count)
        try connection.queryEach(
            Self.sqliteAddById, bodies.indices.filter { remembered[$0] != nil },
            bind: { group, statement in
                try statement.bind(1, Int64(users[group].count))
                try statement.bind(2, remembered[group])
                try statement.bind(3, bodies[group].text)
            },
            row: { group, statement in ids[group] = statement.integer(0) })
        let byId = ids.count { $0 != nil }
        try connection.queryEach(
            Self.sqliteAdd, bodies.indices.filter { ids[$0] == nil },
            bind: { group, statement in
                try statement.bind(1, Int64(users[group].count))
                try statement.bind(2, bodies[group].text)
            },
            row: { group, statement in ids[group] = statement.integer(0) })
        // A context without a row gets one when it is seen a second time.
        let missing = bodies.indices.filter { ids[$0] == nil }
        let created = seen.withLock { seen in
            missing.filter { group in
                let hash = bodies[group].hash
                if users[group].count > 1 || seen[hash] != nil {
                    seen[hash] = nil
                    return true
                }
                seen[hash] = true
                return false
            }
        }
        let rowids = try connection.insertEach(Self.sqliteInsert, created) { group, statement in
            try statement.bind(1, bodies[group].text)
            try statement.bind(2, Int64(users[group].count))
        }
        for (group, rowid) in zip(created, rowids) {
            guard let rowid else {
                throw StorageError(code: .database, message: "SQLite stored no row for a new shared context")
            }
            ids[group] = rowid
        }
        for (group, id) in ids.enumerated() {
            guard let id else { continue }
            for index in users[group] { references[index] = id }
        }
        self.ids.withLock { known in
            for (group, id) in ids.enumerated() where id != remembered[group] { known[bodies[group].hash] = id }
        }
        if byId > 0 { idUpdates.withLock { $0 += byId } }
        return references
    }

    /// A context's text with its hash, worked out before: a dictionary key that hashes an integer.
    private struct Body: Hashable {
        var text: String
        var hash: Int

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
        static func == (lhs: Body, rhs: Body) -> Bool { lhs.hash == rhs.hash && lhs.text == rhs.text }
    }

    /// Adds events to a context's row (found through `contexts_body`) and returns its id.
    static let sqliteAdd = "UPDATE contexts SET events = events + ? WHERE body = ? RETURNING id"

    /// Adds events to the row with a remembered id when it still holds the context, and returns its id.
    private static let sqliteAddById =
        "UPDATE contexts SET events = events + ? WHERE id = ? AND body = ? RETURNING id"

    private static let sqliteInsert = "INSERT INTO contexts (body, events) VALUES (?, ?)"
}
