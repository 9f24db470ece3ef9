import Foundation
import TouchpointCore

/// An `events` row read through ``EventsTable/selectList``: each value taken from its column's
/// place and checked against the column's declaration (``EventColumn``) once.
struct StoredEventRow {
    let seq: Int64
    let messageId: String
    let type: String
    let name: String?
    let userId: String?
    let anonymousId: String?
    let sessionId: String?
    let timestamp: Int64
    /// The `original_timestamp` column (nil also when SQLite left it out, ``originalTimestamp``).
    let originalTimestampColumn: String?
    let sentAt: Int64?
    let receivedAt: Int64
    let payload: String
    let lifted: StoredPayload.Lifted
    /// The members of the event's context kept in `contexts` (nil: none, or kept inline).
    let sharedContext: String?

    /// - Throws: ``StorageError`` (`corruptRow`) when the row has another shape, or NULL or a value
    ///   of another kind where its column allows none.
    init(_ row: SQLRow) throws {
        guard row.count == EventsTable.readColumns.count + 1 else {
            throw Self.corrupt(
                "an events row has \(row.count) columns, not the \(EventsTable.readColumns.count + 1) read")
        }
        let reader = Reader(row: row)
        seq = try reader.integer(.seq)
        messageId = try reader.text(.messageId)
        type = try reader.text(.type)
        name = try reader.optionalText(.event)
        userId = try reader.optionalText(.userId)
        anonymousId = try reader.optionalText(.anonymousId)
        sessionId = try reader.optionalText(.sessionId)
        timestamp = try reader.integer(.timestamp)
        originalTimestampColumn = try reader.optionalText(.originalTimestamp)
        sentAt = try reader.optionalInteger(.sentAt)
        receivedAt = try reader.integer(.receivedAt)
        payload = try reader.text(.payload)
        lifted = StoredPayload.Lifted(rawValue: try reader.integer(.lifted))
        sharedContext = row[EventsTable.sharedContextPosition].text
    }

    /// The original timestamp: its column, or the text the event's times give back when SQLite
    /// left the column empty (``StoredPayload/Lifted/derivedTime``).
    var originalTimestamp: String? {
        if let originalTimestampColumn { return originalTimestampColumn }
        guard lifted.contains(.derivedTime) else { return nil }
        return StoredPayload.derivedOriginalTimestamp(timestamp: timestamp, sentAt: sentAt, receivedAt: receivedAt)
    }

    /// The message as it was received: the stored payload with the members its columns hold put
    /// back (``StoredPayload``).
    /// - Throws: ``StorageError`` (`corruptRow`) when the payload's context is in a `contexts` row
    ///   that is gone.
    func message() throws -> String {
        if lifted.contains(.context), sharedContext == nil {
            throw Self.corrupt(
                "event \(seq) keeps its context in the contexts table, which has no row for it: the database was changed outside the collector; restore it from a backup"
            )
        }
        return StoredPayload.restore(
            payload, lifted: lifted,
            columns: StoredPayload.Columns(
                messageId: messageId, type: type, name: name, userId: userId, anonymousId: anonymousId,
                originalTimestamp: originalTimestamp, sessionId: sessionId),
            sharedContext: sharedContext)
    }

    /// The event as the query API gives it, its message parsed.
    func event() throws -> StoredEvent {
        let payload = try message()
        return StoredEvent(
            sequence: seq, messageId: messageId, type: type, name: name, userId: userId, anonymousId: anonymousId,
            sessionId: sessionId, timestamp: Timestamp.date(milliseconds: timestamp),
            originalTimestamp: originalTimestamp, sentAt: sentAt.map(Timestamp.date(milliseconds:)),
            receivedAt: Timestamp.date(milliseconds: receivedAt),
            message: (try? JSONParser.parse(payload)) ?? .string(payload))
    }

    private static func corrupt(_ message: String) -> StorageError {
        StorageError(code: .corruptRow, message: message)
    }

    /// Reads a row's values by column, as each column's declaration says it may be.
    private struct Reader {
        let row: SQLRow

        private func value(_ column: EventColumn) -> SQLValue { row[EventsTable.readPositions[column.rawValue]] }

        func integer(_ column: EventColumn) throws -> Int64 {
            assert(!column.isNullable, "\(column.name) is declared nullable")
            guard let integer = try optionalInteger(column) else { throw missing(column) }
            return integer
        }

        func optionalInteger(_ column: EventColumn) throws -> Int64? {
            let value = value(column)
            guard !value.isNull else { return nil }
            guard let integer = value.int else { throw wrongKind(column, value) }
            return integer
        }

        func text(_ column: EventColumn) throws -> String {
            assert(!column.isNullable, "\(column.name) is declared nullable")
            guard let text = try optionalText(column) else { throw missing(column) }
            return text
        }

        func optionalText(_ column: EventColumn) throws -> String? {
            let value = value(column)
            guard !value.isNull else { return nil }
            guard let text = value.text else { throw wrongKind(column, value) }
            return text
        }

        private func missing(_ column: EventColumn) -> StorageError {
            StoredEventRow.corrupt("an events row has NULL in \(column.name), which its declaration does not allow")
        }

        private func wrongKind(_ column: EventColumn, _ value: SQLValue) -> StorageError {
            StoredEventRow.corrupt("an events row holds \(value) in \(column.name), not \(column.value)")
        }
    }
}
