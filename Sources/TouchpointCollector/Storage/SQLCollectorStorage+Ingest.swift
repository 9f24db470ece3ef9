extension SQLCollectorStorage {
    /// The columns of `events` an insert writes, in order.
    static let insertColumns =
        "source, message_id, type, event, user_id, anonymous_id, session_id, timestamp, original_timestamp, sent_at, received_at, payload"

    func insert(_ messages: [IngestMessage], source: String) async throws -> [Bool] {
        guard !messages.isEmpty else { return [] }
        // The first copy of a messageId in the request is the one that counts.
        var firstIndex: [String: Int] = [:]
        firstIndex.reserveCapacity(messages.count)
        var unique: [Int] = []
        unique.reserveCapacity(messages.count)
        for (index, message) in messages.enumerated() where firstIndex[message.messageId] == nil {
            firstIndex[message.messageId] = index
            unique.append(index)
        }
        // One order for every writer, so two collectors inserting the same batch cannot deadlock.
        unique.sort { messages[$0].messageId < messages[$1].messageId }
        let statement = insertStatement(unique.map { messages[$0] }, source: source)
        // One statement, atomic on its own: the events and their sessions are stored together
        // (SQLite: a trigger on events; PostgreSQL: a data-modifying WITH).
        let returned = try await backend.writeStatement(statement.sql, statement.binds)
        let inserted = Set(returned.compactMap { $0.first?.text })
        return messages.indices.map { index in
            firstIndex[messages[index].messageId] == index && inserted.contains(messages[index].messageId)
        }
    }

    private func insertStatement(_ rows: [IngestMessage], source: String) -> SQLStatement {
        switch dialect {
        case .sqlite:
            var statement = SQLStatement(dialect, "INSERT INTO events (\(Self.insertColumns)) VALUES ")
            for (offset, row) in rows.enumerated() {
                if offset > 0 { statement.append(", ") }
                statement.bindTuple([
                    .text(source), .text(row.messageId), .text(row.type.rawValue), .optional(row.name),
                    .optional(row.userId), .optional(row.anonymousId), .optional(row.sessionId), .int(row.timestamp),
                    .optional(row.originalTimestamp), .optional(row.sentAt), .int(row.receivedAt), .text(row.payload),
                ])
            }
            statement.append(" ON CONFLICT (source, message_id) DO NOTHING RETURNING message_id")
            return statement
        case .postgres:
            // A statement of one shape whatever the batch size: columns as arrays, zipped by unnest.
            // Empty text stands for NULL (the decoder never produces empty ids or names).
            var statement = SQLStatement(
                dialect, "WITH inserted AS (INSERT INTO events (\(Self.insertColumns)) SELECT ")
            statement.bind(.text(source))
            statement.append(
                ", m, t, NULLIF(e, ''), NULLIF(u, ''), NULLIF(a, ''), NULLIF(s, ''), ts, NULLIF(o, ''), NULLIF(sa, '')::bigint, r, p FROM unnest("
            )
            let arrays: [SQLValue] = [
                .textArray(rows.map(\.messageId)), .textArray(rows.map(\.type.rawValue)),
                .textArray(rows.map { $0.name ?? "" }), .textArray(rows.map { $0.userId ?? "" }),
                .textArray(rows.map { $0.anonymousId ?? "" }), .textArray(rows.map { $0.sessionId ?? "" }),
                .intArray(rows.map(\.timestamp)), .textArray(rows.map { $0.originalTimestamp ?? "" }),
                .textArray(rows.map { $0.sentAt.map(String.init) ?? "" }), .intArray(rows.map(\.receivedAt)),
                .textArray(rows.map(\.payload)),
            ]
            for (offset, array) in arrays.enumerated() {
                if offset > 0 { statement.append(", ") }
                statement.bind(array)
            }
            // Sessions: one row per session among the events stored now, in session order (lock order).
            statement.append(
                """
                ) AS batch(m, t, e, u, a, s, ts, o, sa, r, p) \
                ON CONFLICT (source, message_id) DO NOTHING \
                RETURNING source, message_id, user_id, anonymous_id, session_id, timestamp), \
                touched AS (INSERT INTO sessions \
                (source, session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count) \
                SELECT source, session_id, \
                (array_agg(user_id ORDER BY timestamp DESC) FILTER (WHERE user_id IS NOT NULL))[1], \
                (array_agg(anonymous_id ORDER BY timestamp) FILTER (WHERE anonymous_id IS NOT NULL))[1], \
                MIN(timestamp), MAX(timestamp), COUNT(*) \
                FROM inserted WHERE session_id IS NOT NULL GROUP BY source, session_id ORDER BY session_id \
                ON CONFLICT (source, session_id) DO UPDATE SET \
                user_id = COALESCE(excluded.user_id, sessions.user_id), \
                anonymous_id = COALESCE(sessions.anonymous_id, excluded.anonymous_id), \
                first_timestamp = LEAST(sessions.first_timestamp, excluded.first_timestamp), \
                last_timestamp = GREATEST(sessions.last_timestamp, excluded.last_timestamp), \
                event_count = sessions.event_count + excluded.event_count) \
                SELECT message_id FROM inserted
                """)
            return statement
        }
    }
}
