import Foundation
import TouchpointCore

/// A user's row in `profiles`: kept up to date at ingest (``ProfileRollup``).
struct ProfileRow: Sendable, Hashable {
    var userId: String
    var firstSeen: Int64
    var lastSeen: Int64
    var eventCount: Int
}

extension SQLCollectorStorage {
    /// Users, most recently seen first, optionally only those whose id, merged anonymous id or
    /// identify traits contain `search` (case-insensitive for ASCII).
    func profiles(source: String, search: String?, page: PageRequest) async throws -> Page<ProfileRow> {
        var statement = SQLStatement(
            dialect, "SELECT user_id, first_seen, last_seen, event_count FROM profiles WHERE source = ")
        statement.bind(.text(source))
        if let search, !search.isEmpty {
            let pattern = "%" + Self.likeEscaped(PropertyFilter.folded(search)) + "%"
            statement.append(" AND (\(dialect.asciiLowercased("user_id")) LIKE ")
            statement.bind(.text(pattern))
            statement.append(" ESCAPE '\\' OR user_id IN (SELECT user_id FROM identities WHERE source = ")
            statement.bind(.text(source))
            statement.append(" AND \(dialect.asciiLowercased("anonymous_id")) LIKE ")
            statement.bind(.text(pattern))
            // Served by the small events_identify index (identify calls only).
            statement.append(
                " ESCAPE '\\') OR user_id IN (SELECT user_id FROM events WHERE type = 'identify' AND source = ")
            statement.bind(.text(source))
            statement.append(" AND user_id IS NOT NULL AND \(dialect.asciiLowercased("payload")) LIKE ")
            statement.bind(.text(pattern))
            statement.append(" ESCAPE '\\'))")
        }
        if let cursor = page.cursor {
            guard let separator = cursor.firstIndex(of: ":"), let last = Int64(cursor[..<separator]),
                let user = OpaqueID.decode(cursor[cursor.index(after: separator)...])
            else {
                throw Self.foreignCursor(cursor)
            }
            statement.append(" AND (last_seen < ")
            statement.bind(.int(last))
            statement.append(" OR (last_seen = ")
            statement.bind(.int(last))
            statement.append(" AND user_id < ")
            statement.bind(.text(user))
            statement.append("))")
        }
        statement.append(" ORDER BY last_seen DESC, user_id DESC LIMIT ")
        statement.bind(.int(Int64(page.limit + 1)))
        let rows = try await backend.query(statement).map(Self.profile)
        return Self.page(rows, limit: page.limit) { "\($0.lastSeen):\(OpaqueID.encode($0.userId))" }
    }

    /// One user's profile row, if the user has sent anything.
    func profile(source: String, userId: String) async throws -> ProfileRow? {
        var statement = SQLStatement(
            dialect, "SELECT user_id, first_seen, last_seen, event_count FROM profiles WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND user_id = ")
        statement.bind(.text(userId))
        return try await backend.query(statement).first.map(Self.profile)
    }

    /// The payloads of the users' `identify` (or `group`) calls, in arrival order.
    func callPayloads(source: String, userIds: [String], type: MessageType) async throws
        -> [(userId: String, payload: String)]
    {
        guard !userIds.isEmpty, type == .identify || type == .group else { return [] }
        var statement = SQLStatement(dialect, "SELECT user_id, payload FROM events WHERE type = '\(type.rawValue)'")
        statement.append(" AND source = ")
        statement.bind(.text(source))
        statement.append(" AND user_id IN ")
        statement.bindTuple(userIds.map { .text($0) })
        statement.append(" ORDER BY seq")
        return try await backend.query(statement).compactMap { row in
            guard let user = row[0].text, let payload = row[1].text else { return nil }
            return (user, payload)
        }
    }

    /// The anonymous ids merged into `userId`, in the order they were merged.
    func mergedAnonymousIDs(source: String, userId: String) async throws -> [String] {
        var statement = SQLStatement(dialect, "SELECT anonymous_id FROM identities WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND user_id = ")
        statement.bind(.text(userId))
        statement.append(" ORDER BY merged_at, anonymous_id")
        return try await backend.query(statement).compactMap { $0.first?.text }
    }

    /// The newest sessions of a user or of the anonymous ids merged into them.
    ///
    /// Each id is looked up through its own index (user, anonymous id) and the few newest of each
    /// merged here: one query with `OR` would walk every session of the source newest first.
    func personSessions(source: String, userId: String, anonymousIds: [String], limit: Int) async throws
        -> [SessionSummary]
    {
        var found: [String: SessionSummary] = [:]
        for (column, id) in [("user_id", userId)] + anonymousIds.prefix(50).map({ ("anonymous_id", $0) }) {
            var statement = SQLStatement(
                dialect,
                "SELECT session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count FROM sessions WHERE source = "
            )
            statement.bind(.text(source))
            statement.append(" AND \(column) = ")
            statement.bind(.text(id))
            statement.append(" ORDER BY +last_timestamp DESC LIMIT ")  // by the id's index, then sorted
            statement.bind(.int(Int64(limit)))
            for row in try await backend.query(statement) {
                guard let id = row[0].text, let first = row[3].int, let last = row[4].int, let count = row[5].int else {
                    continue
                }
                found[id] = SessionSummary(
                    sessionId: id, userId: row[1].text, anonymousId: row[2].text,
                    firstTimestamp: Timestamp.date(milliseconds: first),
                    lastTimestamp: Timestamp.date(milliseconds: last), eventCount: Int(count))
            }
        }
        let newest = found.values.sorted { ($0.lastTimestamp, $0.sessionId) > ($1.lastTimestamp, $1.sessionId) }
        return Array(newest.prefix(limit))
    }

    /// The newest events of the given sessions, newest first.
    func recentEvents(source: String, sessionIds: [String], limit: Int) async throws -> [StoredEvent] {
        guard !sessionIds.isEmpty else { return [] }
        var statement = SQLStatement(dialect, "SELECT \(EventsTable.selectList) FROM events WHERE ")
        writer.appendSessions(source: source, sessionIds, to: &statement)
        statement.append(" ORDER BY seq DESC LIMIT ")
        statement.bind(.int(Int64(limit)))
        return try await backend.query(statement).map { try StoredEventRow($0).event() }
    }

    static func profile(_ row: SQLRow) throws -> ProfileRow {
        guard let user = row[0].text, let first = row[1].int, let last = row[2].int, let count = row[3].int else {
            throw StorageError(code: .corruptRow, message: "a profiles row does not have the expected columns")
        }
        return ProfileRow(userId: user, firstSeen: first, lastSeen: last, eventCount: Int(count))
    }

    /// `text` with LIKE's wildcards and the escape character escaped (with `\`).
    static func likeEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
