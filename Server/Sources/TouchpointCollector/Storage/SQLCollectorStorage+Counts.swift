/// Each source's count of stored events and sessions, kept by the statements that store and delete
/// them, in their transactions (schema 13), so that reading them reads a row or a few instead of
/// an index of every event.
///
/// SQLite keeps one row per source, which its one writer updates. PostgreSQL writes in parallel:
/// there a write adds a row of its own (a row that every write updated would make each write wait
/// for the commit of the one before), the rows are summed when read, and a source's rows are
/// folded into one when they pile up (``fold(source:in:)``).
enum SourceCounts {
    /// A source's rows that make a read fold them first.
    static let foldAbove = 256
    /// PostgreSQL ingest writes between two folds of the written source.
    static let foldEvery = 1024

    /// The statement that adds `events` and `sessions` (negative to remove) to `source`'s counts.
    static func change(_ dialect: SQLDialect, source: String, events: Int, sessions: Int) -> SQLStatement {
        var statement = SQLStatement(dialect, "INSERT INTO source_counts (source, events, sessions) VALUES ")
        statement.bindTuple([.text(source), .int(Int64(events)), .int(Int64(sessions))])
        statement.append(dialect.sourceCountsMerge)
        return statement
    }

    /// Replaces `source`'s rows of `source_counts` by one holding their sums, in one transaction.
    /// The rows it deletes are the ones it sums (`RETURNING`); a row another write adds meanwhile
    /// is not among them and stays. Two folds at once each sum only the rows they deleted.
    static func fold(source: String, in backend: any SQLBackend) async throws {
        let dialect = backend.dialect
        var delete = SQLStatement(dialect, "DELETE FROM source_counts WHERE source = ")
        delete.bind(.text(source))
        delete.append(" RETURNING events, sessions")
        let deletion = delete
        try await backend.write { transaction in
            let rows = try await transaction.query(deletion)
            guard !rows.isEmpty else { return }
            let events = rows.reduce(0) { $0 + Int($1[0].int ?? 0) }
            let sessions = rows.reduce(0) { $0 + Int($1[1].int ?? 0) }
            _ = try await transaction.query(
                change(dialect, source: source, events: events, sessions: sessions))
        }
    }
}

extension SQLCollectorStorage {
    func counts(source: String) async throws -> StorageCounts {
        // (PostgreSQL sums bigints as numeric.)
        var statement = SQLStatement(
            dialect,
            "SELECT CAST(COALESCE(SUM(events), 0) AS BIGINT), CAST(COALESCE(SUM(sessions), 0) AS BIGINT), COUNT(*) "
                + "FROM source_counts WHERE source = ")
        statement.bind(.text(source))
        guard let row = try await backend.query(statement).first, let events = row[0].int, let sessions = row[1].int,
            let rows = row[2].int
        else { throw StorageError(code: .corruptRow, message: "counting rows returned nothing") }
        // A fold that fails (a deadlock with another fold) leaves the rows as they are, summed right.
        if rows > SourceCounts.foldAbove { try? await SourceCounts.fold(source: source, in: backend) }
        return StorageCounts(events: Int(events), sessions: Int(sessions))
    }
}
