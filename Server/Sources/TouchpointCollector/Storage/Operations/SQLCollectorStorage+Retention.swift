extension SQLCollectorStorage {
    // MARK: Retention

    func deleteEvents(source: String, beforeMinute: Int64, limit: Int) async throws -> Int {
        // By the minute index (source, minute, seq): a small batch per statement, so a writer
        // waiting behind it (ingest) waits for one batch at most.
        var statement = SQLStatement(
            dialect, "DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND \(Self.minuteExpression) < ")
        statement.bind(.int(beforeMinute))
        statement.append(" LIMIT ")
        statement.bind(.int(Int64(limit)))
        statement.append(") RETURNING context_id")
        return try await deleting(statement, source: source, events: true)
    }

    func deleteSessions(source: String, lastBefore before: Int64, limit: Int) async throws -> Int {
        var statement: SQLStatement
        if dialect == .sqlite {
            // By the row (SQLite finds a session by its id through ``SessionKeys``, not an index).
            statement = SQLStatement(dialect, "DELETE FROM sessions WHERE session_key IN (SELECT session_key")
        } else {
            statement = SQLStatement(dialect, "DELETE FROM sessions WHERE source = ")
            statement.bind(.text(source))
            statement.append(" AND session_id IN (SELECT session_id")
        }
        statement.append(" FROM sessions WHERE source = ")
        statement.bind(.text(source))
        if dialect == .sqlite {
            // SQLite's sessions_recent holds the minute (`SessionRows`).
            statement.append(" AND last_minute <= ")
            statement.bind(.int(Self.minute(max(before, .min + 1) - 1)))
        }
        statement.append(" AND last_timestamp < ")
        statement.bind(.int(before))
        statement.append(" LIMIT ")
        statement.bind(.int(Int64(limit)))
        statement.append(") RETURNING session_id")
        return try await deleting(statement, source: source, events: false)
    }

    /// Runs a delete that returns a row per deleted row (of `events`, their `context_id`, or else
    /// of `sessions`) and takes them off `source`'s counts (`SourceCounts`) and, for events, off
    /// their shared contexts (`SharedContexts`), in one transaction; returns how many it deleted.
    private func deleting(_ statement: SQLStatement, source: String, events: Bool) async throws -> Int {
        let dialect = self.dialect
        return try await backend.write { transaction in
            let rows = try await transaction.query(statement)
            let deleted = rows.count
            guard deleted > 0 else { return 0 }
            if events {
                try await SharedContexts.release(rows.map { $0.first?.int }, in: transaction, dialect: dialect)
            }
            _ = try await transaction.query(
                SourceCounts.change(
                    dialect, source: source, events: events ? -deleted : 0, sessions: events ? 0 : -deleted))
            return deleted
        }
    }
}
