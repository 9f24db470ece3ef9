import Foundation
import TouchpointCore

extension SQLCollectorStorage {
    func eventsPerMinute(source: String, range: TimeRange) async throws -> [MinuteCount] {
        try await backend.query(eventsPerMinuteStatement(source: source, range: range)).compactMap { row in
            guard let minute = row[0].int, let count = row[1].int else { return nil }
            return MinuteCount(minute: Timestamp.date(milliseconds: minute * 60_000), count: Int(count))
        }
    }

    /// The query of ``eventsPerMinute(source:range:)``.
    func eventsPerMinuteStatement(source: String, range: TimeRange) -> SQLStatement {
        // Integer division in both dialects (timestamps are 64-bit integers); the events_minute index
        // holds the same expression, so the count reads the index, and rows only where the range
        // starts or ends inside a minute (`appendRange`).
        var statement = SQLStatement(
            dialect, "SELECT \(SQLStatement.minuteExpression), COUNT(*) FROM events WHERE source = ")
        statement.bind(.text(source))
        statement.appendRange(range)
        statement.append(" GROUP BY 1 ORDER BY 1")
        return statement
    }

    func activeSessionCount(source: String, since: Date) async throws -> Int {
        let since = Timestamp.milliseconds(since)
        let statement = dialect.activeSessionCount(source: source, since: since)
        guard let count = try await backend.query(statement).first?.first?.int else {
            throw StorageError(code: .corruptRow, message: "counting active sessions returned nothing")
        }
        return Int(count)
    }
}
