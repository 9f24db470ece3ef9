extension SQLCollectorStorage {
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
        let rows = unique.map { messages[$0] }
        let insertSQL = insertStatement(rows, source: source)
        let dialect = self.dialect
        let inserted: Set<String> = try await backend.write { transaction in
            let returned = try await transaction.query(insertSQL)
            let inserted = Set(returned.compactMap { $0.first?.text })
            let sessions = Self.sessionUpdates(rows.filter { inserted.contains($0.messageId) })
            if !sessions.isEmpty {
                _ = try await transaction.query(Self.sessionUpsert(sessions, source: source, dialect: dialect))
            }
            return inserted
        }
        return messages.indices.map { index in
            firstIndex[messages[index].messageId] == index && inserted.contains(messages[index].messageId)
        }
    }

    private func insertStatement(_ rows: [IngestMessage], source: String) -> SQLStatement {
        let columns =
            "source, message_id, type, event, user_id, anonymous_id, session_id, timestamp, original_timestamp, sent_at, received_at, payload"
        var statement = SQLStatement(dialect, "INSERT INTO events (\(columns)) ")
        switch dialect {
        case .sqlite:
            statement.append("VALUES ")
            for (offset, row) in rows.enumerated() {
                if offset > 0 { statement.append(", ") }
                statement.bindTuple([
                    .text(source), .text(row.messageId), .text(row.type.rawValue), .optional(row.name),
                    .optional(row.userId), .optional(row.anonymousId), .optional(row.sessionId), .int(row.timestamp),
                    .optional(row.originalTimestamp), .optional(row.sentAt), .int(row.receivedAt), .text(row.payload),
                ])
            }
        case .postgres:
            // One statement of fixed shape whatever the batch size: arrays, zipped by unnest.
            // Empty text stands for NULL (the decoder never produces empty ids or names).
            statement.append("SELECT ")
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
            statement.append(") AS batch(m, t, e, u, a, s, ts, o, sa, r, p)")
        }
        statement.append(" ON CONFLICT (source, message_id) DO NOTHING RETURNING message_id")
        return statement
    }

    struct SessionUpdate {
        var sessionId: String
        var userId: String?
        var anonymousId: String?
        var first: Int64
        var last: Int64
        var count: Int64
    }

    /// One update per session among the newly stored messages, in session id order.
    static func sessionUpdates(_ messages: [IngestMessage]) -> [SessionUpdate] {
        var updates: [String: SessionUpdate] = [:]
        for message in messages {
            guard let sessionId = message.sessionId else { continue }
            if var update = updates[sessionId] {
                if let userId = message.userId { update.userId = userId }
                if update.anonymousId == nil { update.anonymousId = message.anonymousId }
                update.first = min(update.first, message.timestamp)
                update.last = max(update.last, message.timestamp)
                update.count += 1
                updates[sessionId] = update
            } else {
                updates[sessionId] = SessionUpdate(
                    sessionId: sessionId, userId: message.userId, anonymousId: message.anonymousId,
                    first: message.timestamp, last: message.timestamp, count: 1)
            }
        }
        return updates.values.sorted { $0.sessionId < $1.sessionId }
    }

    static func sessionUpsert(_ updates: [SessionUpdate], source: String, dialect: SQLDialect) -> SQLStatement {
        var statement = SQLStatement(
            dialect,
            "INSERT INTO sessions (source, session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count) VALUES "
        )
        for (offset, update) in updates.enumerated() {
            if offset > 0 { statement.append(", ") }
            statement.bindTuple([
                .text(source), .text(update.sessionId), .optional(update.userId), .optional(update.anonymousId),
                .int(update.first), .int(update.last), .int(update.count),
            ])
        }
        statement.append(
            """
             ON CONFLICT (source, session_id) DO UPDATE SET \
            user_id = COALESCE(excluded.user_id, sessions.user_id), \
            anonymous_id = COALESCE(sessions.anonymous_id, excluded.anonymous_id), \
            first_timestamp = \(dialect.least)(sessions.first_timestamp, excluded.first_timestamp), \
            last_timestamp = \(dialect.greatest)(sessions.last_timestamp, excluded.last_timestamp), \
            event_count = sessions.event_count + excluded.event_count
            """)
        return statement
    }
}
