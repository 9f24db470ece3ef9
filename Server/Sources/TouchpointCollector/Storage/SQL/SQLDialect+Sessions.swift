/// Where the two databases' `sessions` tables differ, in the statements that read and delete them.
///
/// SQLite's `sessions_recent` holds the minute of a session's last event (`last_minute`, set only
/// when a write moves it, ``SessionRows``) rather than its time, which changes with every write;
/// queries read that index by minute and compare the exact time in the rows of the first and last
/// minute. A session's row is its `session_key` (its rowid), found by the session's key
/// (``SessionKeys``), and its events name it in theirs. PostgreSQL's sessions are unique by
/// (source, session_id) and indexed by their last event's time.
extension SQLDialect {
    /// Appends the condition that a session's last event is at or after `from` (ms).
    func appendLastEvent(atOrAfter from: Int64, to statement: inout SQLStatement) {
        if self == .sqlite {
            statement.append(" AND last_minute >= ")
            statement.bind(.int(SQLStatement.minute(from)))
        }
        statement.append(" AND last_timestamp >= ")
        statement.bind(.int(from))
    }

    /// Appends the condition that a session comes after the one whose last event is at `last`
    /// (ms) with id `sessionId`, newest first (by time, then id as stored: SQLite orders packed
    /// ids, blobs, after text ones).
    func appendSession(before last: Int64, sessionId: String, to statement: inout SQLStatement) {
        if self == .sqlite {
            statement.append(" AND last_minute <= ")
            statement.bind(.int(SQLStatement.minute(last)))
        }
        statement.append(" AND (last_timestamp < ")
        statement.bind(.int(last))
        statement.append(" OR (last_timestamp = ")
        statement.bind(.int(last))
        statement.append(" AND session_id < ")
        statement.bind(.id(sessionId))
        statement.append("))")
    }

    /// The order of a source's sessions newest first: in SQLite by the minute through
    /// `sessions_recent`, each minute's sessions sorted by their exact time (the same order: the
    /// minute grows with the time).
    var newestSessionsFirst: String {
        self == .sqlite
            ? " ORDER BY last_minute DESC, last_timestamp DESC, session_id DESC"
            : " ORDER BY last_timestamp DESC, session_id DESC"
    }

    /// The condition that an `events` row is an event of the `sessions` row of the same query
    /// (served by the index on the events' session).
    var eventOfSession: String {
        self == .sqlite
            ? "events.session_key = sessions.rowid AND touchpoint_id(events.session_id) = touchpoint_id(sessions.session_id)"
            : "events.source = sessions.source AND events.session_id = sessions.session_id"
    }

    /// How many sessions of `source` had an event at or after `since` (ms): in SQLite the later
    /// minutes counted in the index alone, the sessions of the first minute by their exact time.
    func activeSessionCount(source: String, since: Int64) -> SQLStatement {
        var statement: SQLStatement
        if self == .sqlite {
            let minute = SQLStatement.minute(since)
            statement = SQLStatement(self, "SELECT (SELECT COUNT(*) FROM sessions WHERE source = ")
            statement.bind(.text(source))
            statement.append(" AND last_minute > ")
            statement.bind(.int(minute))
            statement.append(") + (SELECT COUNT(*) FROM sessions WHERE source = ")
            statement.bind(.text(source))
            statement.append(" AND last_minute = ")
            statement.bind(.int(minute))
            statement.append(" AND last_timestamp >= ")
            statement.bind(.int(since))
            statement.append(")")
        } else {
            statement = SQLStatement(self, "SELECT COUNT(*) FROM sessions WHERE source = ")
            statement.bind(.text(source))
            statement.append(" AND last_timestamp >= ")
            statement.bind(.int(since))
        }
        return statement
    }

    /// Deletes at most `limit` sessions of `source` whose last event is before `before` (ms),
    /// returning a row per session deleted: in SQLite by their rows (a session is found by its id
    /// through ``SessionKeys``, not an index), in PostgreSQL by their ids.
    func deleteSessions(source: String, lastBefore before: Int64, limit: Int) -> SQLStatement {
        var statement: SQLStatement
        if self == .sqlite {
            statement = SQLStatement(self, "DELETE FROM sessions WHERE session_key IN (SELECT session_key")
        } else {
            statement = SQLStatement(self, "DELETE FROM sessions WHERE source = ")
            statement.bind(.text(source))
            statement.append(" AND session_id IN (SELECT session_id")
        }
        statement.append(" FROM sessions WHERE source = ")
        statement.bind(.text(source))
        if self == .sqlite {
            statement.append(" AND last_minute <= ")
            statement.bind(.int(SQLStatement.minute(max(before, .min + 1) - 1)))
        }
        statement.append(" AND last_timestamp < ")
        statement.bind(.int(before))
        statement.append(" LIMIT ")
        statement.bind(.int(Int64(limit)))
        statement.append(") RETURNING session_id")
        return statement
    }
}
