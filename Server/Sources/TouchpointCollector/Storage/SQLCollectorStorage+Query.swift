import Foundation
import TouchpointCore

extension SQLCollectorStorage {
    func sessions(source: String, filter: SessionFilter, page: PageRequest) async throws -> Page<SessionSummary> {
        var statement = SQLStatement(
            dialect,
            "SELECT session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count FROM sessions WHERE source = "
        )
        statement.bind(.text(source))
        switch filter.user {
        case .userId(let id):
            statement.append(" AND user_id = ")
            statement.bind(.text(id))
        case .anonymousId(let id):
            statement.append(" AND anonymous_id = ")
            statement.bind(.text(id))
        case .any(let id):
            statement.append(" AND (user_id = ")
            statement.bind(.text(id))
            statement.append(" OR anonymous_id = ")
            statement.bind(.text(id))
            statement.append(")")
        case nil:
            break
        }
        if let from = filter.range.fromMilliseconds {
            dialect.appendLastEvent(atOrAfter: from, to: &statement)
        }
        if let to = filter.range.toMilliseconds {
            statement.append(" AND first_timestamp < ")
            statement.bind(.int(to))
        }
        if let name = filter.eventName {
            statement.append(" AND EXISTS (SELECT 1 FROM events WHERE \(dialect.eventOfSession) AND events.event = ")
            statement.bind(.text(name))
            statement.append(")")
        }
        if let cursor = page.cursor {
            // Newest first: continue below the last session of the previous page.
            guard let separator = cursor.firstIndex(of: ":"), let last = Int64(cursor[..<separator]),
                let sessionId = OpaqueID.decode(cursor[cursor.index(after: separator)...])
            else {
                throw Self.foreignCursor(cursor)
            }
            dialect.appendSession(before: last, sessionId: sessionId, to: &statement)
        }
        // One user's sessions are found by their id and sorted (`+`: not by walking every session of
        // the source newest first through sessions_recent until the user's turn up).
        statement.append(
            filter.user != nil ? " ORDER BY +last_timestamp DESC, session_id DESC" : dialect.newestSessionsFirst)
        statement.append(" LIMIT ")
        statement.bind(.int(Int64(page.limit + 1)))
        let rows = try await backend.query(statement)
        let sessions = try rows.map { row -> SessionSummary in
            guard let id = row[0].text, let first = row[3].int, let last = row[4].int, let count = row[5].int else {
                throw StorageError(code: .corruptRow, message: "a sessions row does not have the expected columns")
            }
            return SessionSummary(
                sessionId: id, userId: row[1].text, anonymousId: row[2].text,
                firstTimestamp: Timestamp.date(milliseconds: first),
                lastTimestamp: Timestamp.date(milliseconds: last), eventCount: Int(count))
        }
        return Self.page(sessions, limit: page.limit) { session in
            "\(Timestamp.milliseconds(session.lastTimestamp)):\(OpaqueID.encode(session.sessionId))"
        }
    }

    func sessionEvents(source: String, sessionId: String, page: PageRequest) async throws -> Page<StoredEvent> {
        var statement = SQLStatement(dialect, "SELECT \(EventsTable.selectList) FROM events WHERE ")
        writer.appendSessions(source: source, [sessionId], to: &statement)
        // Arrival order, not corrected time: skew correction shifts each request by its own
        // latency, so events 1 ms apart in consecutive batches could swap. The SDK sends a
        // session's events in log order, one request at a time, so arrival order is log order.
        if let cursor = page.cursor {
            guard let after = Int64(cursor) else {
                throw Self.foreignCursor(cursor)
            }
            statement.append(" AND seq > ")
            statement.bind(.int(after))
        }
        statement.append(" ORDER BY seq LIMIT ")
        statement.bind(.int(Int64(page.limit + 1)))
        let events = try await backend.query(statement).map { try StoredEventRow($0).event() }
        return Self.page(events, limit: page.limit) { "\($0.sequence)" }
    }

    func events(source: String, filter: EventFilter, page: PageRequest) async throws -> Page<StoredEvent> {
        let statement = try eventsStatement(source: source, filter: filter, page: page)
        let events = try await backend.query(statement).map { try StoredEventRow($0).event() }
        return Self.page(events, limit: page.limit) { event in
            Self.keysetCursor(timestamp: Timestamp.milliseconds(event.timestamp), sequence: event.sequence)
        }
    }

    /// The query for one page of ``events(source:filter:page:)``.
    func eventsStatement(source: String, filter: EventFilter, page: PageRequest) throws -> SQLStatement {
        var statement = SQLStatement(
            dialect,
            "SELECT \(EventsTable.selectList) FROM \(filter.name == nil ? "events" : dialect.eventsByName) WHERE source = "
        )
        statement.bind(.text(source))
        if let name = filter.name {
            statement.append(" AND event = ")
            statement.bind(.text(name))
        }
        statement.appendRange(filter.range)
        try Self.appendKeyset(after: page, to: &statement)
        return statement
    }

    /// The cursor after an event: `<minute>:<seq>`.
    static func keysetCursor(timestamp: Int64, sequence: Int64) -> String {
        "\(SQLStatement.minute(timestamp)):\(sequence)"
    }

    /// Keyset paging in (minute, seq) order, or its reverse: rows after the cursor, one more than
    /// the page holds.
    ///
    /// Events are listed by the minute of their (corrected) time, and within a minute in arrival
    /// order. Ordering by the exact time instead would need an index on it, into which events
    /// arriving with scattered timestamps insert at scattered places: measured with the load
    /// generator's events, that wrote four times as many WAL bytes per event (BENCHMARKS.md).
    /// The minute indexes take new events at the end of a minute's range.
    private static func appendKeyset(
        after page: PageRequest, descending: Bool = false, to statement: inout SQLStatement
    ) throws {
        if let (minute, sequence) = try integerCursor(page.cursor) {
            // The minute alone first: what the index is searched by (SQLite's keeps seq only as
            // the rowid every entry ends with, which a row value does not search by).
            statement.append(" AND \(SQLStatement.minuteExpression) \(descending ? "<=" : ">=") ")
            statement.bind(.int(minute))
            statement.append(" AND (\(SQLStatement.minuteExpression), seq) \(descending ? "<" : ">") (")
            statement.bind(.int(minute))
            statement.append(", ")
            statement.bind(.int(sequence))
            statement.append(")")
        }
        statement.append(
            descending
                ? " ORDER BY \(SQLStatement.minuteExpression) DESC, seq DESC LIMIT "
                : " ORDER BY \(SQLStatement.minuteExpression), seq LIMIT ")
        statement.bind(.int(Int64(page.limit + 1)))
    }

    // MARK: Surveys and promos

    func surveyTallies(source: String, range: TimeRange) async throws -> [SurveyTallyRow] {
        let id = dialect.propertyText("id")
        let type = dialect.propertyText("type")
        let responseType = dialect.propertyText("responseType")
        let option = dialect.propertyText("option")
        var statement = SQLStatement(
            dialect,
            "SELECT event, \(id), COALESCE(\(type), \(responseType)), CASE WHEN event = 'survey_response' THEN \(option) END, COUNT(*) FROM \(dialect.eventsByName) WHERE source = "
        )
        statement.bind(.text(source))
        statement.append(" AND event IN ('survey_presented', 'survey_response', 'survey_dismissed')")
        statement.appendRange(range)
        statement.append(" GROUP BY 1, 2, 3, 4")
        return try await backend.query(statement).compactMap { row in
            guard let event = row[0].text, let surveyId = row[1].text, let count = row[4].int else { return nil }
            return SurveyTallyRow(
                event: event, surveyId: surveyId, responseType: row[2].text, option: row[3].text, count: Int(count))
        }
    }

    func surveyTextAnswers(
        source: String, surveyId: String, range: TimeRange, newestFirst: Bool, page: PageRequest
    ) async throws -> Page<SurveyTextAnswer> {
        let text = dialect.propertyText("text")
        var statement = SQLStatement(
            dialect,
            "SELECT seq, timestamp, user_id, anonymous_id, session_id, message_id, \(text) FROM \(dialect.eventsByName) WHERE source = "
        )
        statement.bind(.text(source))
        statement.append(" AND event = 'survey_response' AND \(dialect.propertyText("id")) = ")
        statement.bind(.text(surveyId))
        statement.append(" AND \(dialect.propertyText("type")) = 'text'")
        statement.appendRange(range)
        try Self.appendKeyset(after: page, descending: newestFirst, to: &statement)
        let rows = try await backend.query(statement)
        let answers = rows.compactMap { row -> (Int64, SurveyTextAnswer)? in
            guard let sequence = row[0].int, let timestamp = row[1].int, let messageId = row[5].text else {
                return nil
            }
            let answer = SurveyTextAnswer(
                text: row[6].text ?? "", timestamp: Timestamp.date(milliseconds: timestamp), userId: row[2].text,
                anonymousId: row[3].text, sessionId: row[4].text, messageId: messageId)
            return (sequence, answer)
        }
        let paged = Self.page(answers, limit: page.limit) { entry in
            Self.keysetCursor(timestamp: Timestamp.milliseconds(entry.1.timestamp), sequence: entry.0)
        }
        return Page(items: paged.items.map(\.1), nextCursor: paged.nextCursor)
    }

    func promoTallies(source: String, range: TimeRange) async throws -> [PromoTallyRow] {
        let app = dialect.propertyText("appID")
        let current = dialect.propertyText("currentAppID")
        var statement = SQLStatement(
            dialect, "SELECT event, \(app), \(current), COUNT(*) FROM \(dialect.eventsByName) WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND event IN ('promo_impression', 'promo_tap')")
        statement.appendRange(range)
        statement.append(" GROUP BY 1, 2, 3")
        return try await backend.query(statement).compactMap { row in
            guard let event = row[0].text, let appID = row[1].text, let count = row[3].int else { return nil }
            return PromoTallyRow(event: event, appID: appID, currentAppID: row[2].text, count: Int(count))
        }
    }
}

extension SQLCollectorStorage {
    /// The names of the events `source` holds, in order: one seek in the name-and-minute index per
    /// name (each the smallest name after the one before), not a pass over its events.
    func eventNames(source: String) async throws -> [String] {
        var statement = SQLStatement(
            dialect, "WITH RECURSIVE names (name) AS (SELECT MIN(event) FROM \(dialect.eventsByName) WHERE source = ")
        statement.bind(.text(source))
        statement.append(
            " UNION ALL SELECT (SELECT MIN(event) FROM \(dialect.eventsByName) WHERE source = ")
        statement.bind(.text(source))
        statement.append(
            " AND event > names.name) FROM names WHERE names.name IS NOT NULL) SELECT name FROM names WHERE name IS NOT NULL"
        )
        return try await backend.query(statement).compactMap { $0.first?.text }
    }

    /// One page of the export: each event as a line of NDJSON holding the message as it was
    /// received (its stored payload with the members its columns hold put back, not parsed again), its
    /// corrected time and when it arrived.
    func exportPage(source: String, range: TimeRange, page: PageRequest) async throws -> Page<String> {
        let statement = try eventsStatement(source: source, filter: EventFilter(range: range), page: page)
        let rows = try await backend.query(statement)
        let lines = try rows.map { row -> (Int64, Int64, String) in
            let event = try StoredEventRow(row)
            let line =
                "{\"timestamp\":\"\(Timestamp.format(Timestamp.date(milliseconds: event.timestamp)))\",\"receivedAt\":\"\(Timestamp.format(Timestamp.date(milliseconds: event.receivedAt)))\",\"message\":\(try event.message())}\n"
            return (event.seq, event.timestamp, line)
        }
        let paged = Self.page(lines, limit: page.limit) { Self.keysetCursor(timestamp: $0.1, sequence: $0.0) }
        return Page(items: paged.items.map(\.2), nextCursor: paged.nextCursor)
    }
}
