extension SQLCollectorStorage {
    // MARK: Retention

    func deleteEvents(source: String, beforeMinute: Int64, limit: Int) async throws -> Int {
        // By the minute index (source, minute, seq): a small batch per statement, so a writer
        // waiting behind it (ingest) waits for one batch at most.
        var statement = SQLStatement(
            dialect, "DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND \(SQLStatement.minuteExpression) < ")
        statement.bind(.int(beforeMinute))
        statement.append(" LIMIT ")
        statement.bind(.int(Int64(limit)))
        statement.append(") RETURNING context_id, \(Self.definedColumns)")
        return try await deleting(statement, source: source, events: true)
    }

    func deleteSessions(source: String, lastBefore before: Int64, limit: Int) async throws -> Int {
        let statement = dialect.deleteSessions(source: source, lastBefore: before, limit: limit)
        return try await deleting(statement, source: source, events: false)
    }

    /// Runs a delete that returns a row per deleted row (of `events`, their `context_id` and
    /// ``definedColumns``, or else of `sessions`) and takes them off `source`'s counts
    /// (`SourceCounts`) and, for events, off their shared contexts (`SharedContexts`) and
    /// definitions (`DefinitionCounts`), in one transaction; returns how many it deleted.
    private func deleting(_ statement: SQLStatement, source: String, events: Bool) async throws -> Int {
        let dialect = self.dialect
        let rollups = calendars.rollups
        return try await backend.write { transaction in
            let rows = try await transaction.query(statement)
            let deleted = rows.count
            guard deleted > 0 else { return 0 }
            if events {
                try await Self.releaseContexts(rows.map { $0.first?.int }, in: transaction, dialect: dialect)
                try await Self.forgetDefinitions(
                    of: rows, at: 1, rollups: rollups, in: transaction, dialect: dialect)
            }
            _ = try await transaction.query(
                SourceCounts.change(
                    dialect, source: source, events: events ? -deleted : 0, sessions: events ? 0 : -deleted))
            return deleted
        }
    }
}
