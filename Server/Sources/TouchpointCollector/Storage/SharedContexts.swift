import TouchpointCore

/// The contexts SQLite keeps once instead of in every event (schema 14).
///
/// A web SDK sends the same library, locale and user agent with every call of a visit, and every
/// visitor on one browser sends the same ones: about 200 of a web event's 560 bytes. The members a
/// `track`, `page` or `screen` call's context holds beside `page` and `sessionId` (set apart by
/// ``StoredPayload/compact(_:columns:shareContext:)``) go into a row of `contexts`, unique by its
/// text, that the event names in `context_id`; reading an event puts them back.
///
/// A context gets its row the second time it is seen (in one write or two, as far as a table of
/// recent hashes remembers): one sent once stays in its event, so that no sender can make the
/// store larger than keeping every context inline would. Each row counts the events that name it;
/// the deletion of a user's data and retention take their events off, and a row that no event names
/// any more is deleted in the same transaction (a context can hold what identifies a person: an
/// IP address, a device id).
///
/// PostgreSQL keeps every context inline: its writes run in parallel, and a row that they all
/// update would make them wait for each other's commits.
final class SharedContexts: Sendable {
    /// Hashes of contexts seen recently that have no row yet.
    private let seen = Locked(RecentHashes<Bool>(slots: 1 << 16))

    /// Each new row's context: the `contexts` row that now names it, or nil to keep it inline.
    /// Runs in the writer's transaction, before the rows are inserted.
    /// - Parameters:
    ///   - new: the indices of the rows that will be stored.
    /// - Returns: per row of `rows`, the `contexts` row's id when its context is shared.
    func references(_ rows: [InsertCoalescer.Row], new: [Int], on connection: SQLiteConnection) throws -> [Int64?] {
        // Each distinct context once (its text hashed once per row), with the rows that carry it.
        var groups: [String: Int] = [:]
        var bodies: [String] = []
        var users: [[Int]] = []
        for index in new {
            guard let body = rows[index].stored.sharedContext else { continue }
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
        var ids = [Int64?](repeating: nil, count: bodies.count)
        try connection.queryEach(
            Self.sqliteAdd, bodies.indices,
            bind: { group, statement in
                try statement.bind(1, Int64(users[group].count))
                try statement.bind(2, bodies[group])
            },
            row: { group, statement in ids[group] = statement.integer(0) })
        // A context without a row gets one when it is seen a second time.
        let missing = bodies.indices.filter { ids[$0] == nil }
        let created = seen.withLock { seen in
            missing.filter { group in
                let hash = bodies[group].hashValue
                if users[group].count > 1 || seen[hash] != nil {
                    seen[hash] = nil
                    return true
                }
                seen[hash] = true
                return false
            }
        }
        let rowids = try connection.insertEach(Self.sqliteInsert, created) { group, statement in
            try statement.bind(1, bodies[group])
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
        return references
    }

    /// Takes deleted events off the rows that their contexts name, and deletes the rows that no
    /// event names any more, in the deleting transaction.
    /// - Parameter ids: the deleted events' `context_id`s (nil for an inline context).
    static func release(_ ids: [Int64?], in transaction: any SQLTransaction, dialect: SQLDialect) async throws {
        var counts: [Int64: Int64] = [:]
        for case let id? in ids { counts[id, default: 0] += 1 }
        var unused: [SQLValue] = []
        for (id, count) in counts.sorted(by: { $0.key < $1.key }) {
            var statement = SQLStatement(dialect, "UPDATE contexts SET events = events - ")
            statement.bind(.int(count))
            statement.append(" WHERE id = ")
            statement.bind(.int(id))
            statement.append(" RETURNING events")
            let left = try await transaction.query(statement).first?.first?.int
            if let left, left <= 0 { unused.append(.int(id)) }
        }
        guard !unused.isEmpty else { return }
        var delete = SQLStatement(dialect, "DELETE FROM contexts WHERE id IN ")
        delete.bindTuple(unused)
        _ = try await transaction.query(delete)
    }

    /// Adds events to a context's row (found through `contexts_body`) and returns its id.
    static let sqliteAdd = "UPDATE contexts SET events = events + ? WHERE body = ? RETURNING id"

    private static let sqliteInsert = "INSERT INTO contexts (body, events) VALUES (?, ?)"

    /// The column that reads an event's shared context back (NULL for one kept inline), after
    /// ``SQLCollectorStorage/eventColumns``' others.
    static let column = "(SELECT body FROM contexts WHERE contexts.id = events.context_id)"
}
