extension SQLCollectorStorage {
    /// The columns of `events` an insert writes, in order.
    static let insertColumns =
        "source, message_id, type, event, user_id, anonymous_id, session_id, timestamp, original_timestamp, sent_at, received_at, payload"

    func insert(_ messages: [IngestMessage], source: String) async throws -> [Bool] {
        guard !messages.isEmpty else { return [] }
        let rows = messages.map { InsertCoalescer.Row(source: source, message: $0) }
        if let coalescer { return try await coalescer.insert(rows) }
        // The first copy of a messageId in the request is the one that counts.
        var seen = Set<String>()
        let unique = rows.filter { seen.insert($0.message.messageId).inserted }
        let stored = try await Self.write(unique, backend: backend)
        var reported = Set<String>()
        return messages.map { stored.contains([source, $0.messageId]) && reported.insert($0.messageId).inserted }
    }

    /// Stores rows with unique (source, messageId) in one statement, atomic on its own: the events
    /// and their sessions together (SQLite: a trigger on events; PostgreSQL: a data-modifying WITH).
    /// - Returns: `[source, messageId]` of the rows stored now.
    static func write(_ rows: [InsertCoalescer.Row], backend: any SQLBackend) async throws -> Set<[String]> {
        guard !rows.isEmpty else { return [] }
        // Rows go in in the order received, so `seq` is arrival order and a session lists its
        // events in the sender's order. Two collectors inserting the same batch (a retry that
        // reached both) lock its keys in the same order and cannot deadlock; only overlapping
        // batches in different orders could, and then PostgreSQL aborts one statement, which
        // `PostgresBackend` runs again (and past its retries the sender gets a 5xx and retries).
        let statement = insertStatement(rows, dialect: backend.dialect)
        let returned = try await backend.writeStatement(statement.sql, statement.binds)
        return Set(returned.compactMap { row in row.count == 2 ? row.compactMap(\.text) : nil })
    }

    private static func insertStatement(_ rows: [InsertCoalescer.Row], dialect: SQLDialect) -> SQLStatement {
        switch dialect {
        case .sqlite:
            var statement = SQLStatement(dialect, "INSERT INTO events (\(insertColumns)) VALUES ")
            for (offset, row) in rows.enumerated() {
                if offset > 0 { statement.append(", ") }
                let message = row.message
                statement.bindTuple([
                    .text(row.source), .text(message.messageId), .text(message.type.rawValue), .optional(message.name),
                    .optional(message.userId), .optional(message.anonymousId), .optional(message.sessionId),
                    .int(message.timestamp), .optional(message.originalTimestamp), .optional(message.sentAt),
                    .int(message.receivedAt), .text(message.payload),
                ])
            }
            statement.append(" ON CONFLICT (source, message_id) DO NOTHING RETURNING source, message_id")
            return statement
        case .postgres:
            // A statement of one shape whatever the batch size: columns as arrays, zipped by unnest.
            // Empty text stands for NULL (the decoder never produces empty ids or names).
            let messages = rows.map(\.message)
            var statement = SQLStatement(dialect, "WITH inserted AS (INSERT INTO events (\(insertColumns)) SELECT ")
            statement.append(
                "src, m, t, NULLIF(e, ''), NULLIF(u, ''), NULLIF(a, ''), NULLIF(s, ''), ts, NULLIF(o, ''), NULLIF(sa, '')::bigint, r, p FROM unnest("
            )
            let arrays: [SQLValue] = [
                .textArray(rows.map(\.source)),
                .textArray(messages.map(\.messageId)), .textArray(messages.map(\.type.rawValue)),
                .textArray(messages.map { $0.name ?? "" }), .textArray(messages.map { $0.userId ?? "" }),
                .textArray(messages.map { $0.anonymousId ?? "" }), .textArray(messages.map { $0.sessionId ?? "" }),
                .intArray(messages.map(\.timestamp)), .textArray(messages.map { $0.originalTimestamp ?? "" }),
                .textArray(messages.map { $0.sentAt.map(String.init) ?? "" }), .intArray(messages.map(\.receivedAt)),
                .textArray(messages.map(\.payload)),
            ]
            for (offset, array) in arrays.enumerated() {
                if offset > 0 { statement.append(", ") }
                statement.bind(array)
            }
            // Sessions: one row per session among the events stored now, in session order (lock order).
            statement.append(
                """
                ) AS batch(src, m, t, e, u, a, s, ts, o, sa, r, p) \
                ON CONFLICT (source, message_id) DO NOTHING \
                RETURNING source, message_id, user_id, anonymous_id, session_id, timestamp), \
                touched AS (INSERT INTO sessions \
                (source, session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count) \
                SELECT source, session_id, \
                (array_agg(user_id ORDER BY timestamp DESC) FILTER (WHERE user_id IS NOT NULL))[1], \
                (array_agg(anonymous_id ORDER BY timestamp) FILTER (WHERE anonymous_id IS NOT NULL))[1], \
                MIN(timestamp), MAX(timestamp), COUNT(*) \
                FROM inserted WHERE session_id IS NOT NULL GROUP BY source, session_id ORDER BY source, session_id \
                ON CONFLICT (source, session_id) DO UPDATE SET \
                user_id = COALESCE(excluded.user_id, sessions.user_id), \
                anonymous_id = COALESCE(sessions.anonymous_id, excluded.anonymous_id), \
                first_timestamp = LEAST(sessions.first_timestamp, excluded.first_timestamp), \
                last_timestamp = GREATEST(sessions.last_timestamp, excluded.last_timestamp), \
                event_count = sessions.event_count + excluded.event_count) \
                SELECT source, message_id FROM inserted
                """)
            return statement
        }
    }
}
