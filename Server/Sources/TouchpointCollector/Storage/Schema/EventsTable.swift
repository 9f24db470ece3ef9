/// A column of `events`, declared once: its name, its SQL type in each database, the kind of value
/// it holds and whether it may be NULL, in the order of SQLite's table.
///
/// The statements that store events (``EventsTable/insert(in:leaving:)``: SQLite's prepared insert,
/// PostgreSQL's statement over arrays), the columns an event is read back through
/// (``EventsTable/selectList``) and the reading of such a row (``StoredEventRow``) are made from
/// these cases. Adding a column is a migration, a case here and the value each writer gives it; a
/// test compares the declaration with each database's migrated table, and the whole schema with
/// a committed dump.
enum EventColumn: Int, CaseIterable, Sendable {
    case seq
    case source
    case messageId
    case type
    case event
    case userId
    case anonymousId
    case sessionId
    case timestamp
    case originalTimestamp
    case sentAt
    case receivedAt
    case payload
    /// SQLite only: the rowid of the event's session (``SessionRows``).
    case sessionKey
    /// Which members the stored payload leaves out (``StoredPayload/Lifted``).
    case lifted
    /// The event's person as a number (``PersonKeys``).
    case personKey
    /// The shared context's row (``SharedContexts``; PostgreSQL keeps contexts inline).
    case contextId

    /// What a value of a column is.
    enum Value: Sendable {
        /// A 64-bit integer.
        case integer
        /// Text.
        case text
        /// A message or session id: text, which SQLite keeps in 16 bytes when it spells a UUID
        /// (``PackedID``).
        case id
    }

    /// The column's name in SQL.
    var name: String {
        switch self {
        case .seq: "seq"
        case .source: "source"
        case .messageId: "message_id"
        case .type: "type"
        case .event: "event"
        case .userId: "user_id"
        case .anonymousId: "anonymous_id"
        case .sessionId: "session_id"
        case .timestamp: "timestamp"
        case .originalTimestamp: "original_timestamp"
        case .sentAt: "sent_at"
        case .receivedAt: "received_at"
        case .payload: "payload"
        case .sessionKey: "session_key"
        case .lifted: "lifted"
        case .personKey: "person_key"
        case .contextId: "context_id"
        }
    }

    /// The kind of value the column holds.
    var value: Value {
        switch self {
        case .seq, .timestamp, .sentAt, .receivedAt, .sessionKey, .lifted, .personKey, .contextId: .integer
        case .messageId, .sessionId: .id
        case .source, .type, .event, .userId, .anonymousId, .originalTimestamp, .payload: .text
        }
    }

    /// Whether the column may be NULL.
    var isNullable: Bool {
        switch self {
        case .seq, .source, .messageId, .type, .timestamp, .receivedAt, .payload, .lifted: false
        case .event, .userId, .anonymousId, .sessionId, .originalTimestamp, .sentAt, .sessionKey, .personKey,
            .contextId:
            true
        }
    }

    /// The column's type as `dialect`'s catalog names it (SQLite's `PRAGMA table_info`,
    /// PostgreSQL's `information_schema.columns`), or nil when that database's table has no such
    /// column.
    func type(in dialect: SQLDialect) -> String? {
        switch (dialect, value) {
        case (.postgres, _) where self == .sessionKey: nil
        case (.sqlite, .integer): "INTEGER"
        case (.sqlite, .text), (.sqlite, .id): "TEXT"
        case (.postgres, .integer): "bigint"
        case (.postgres, .text), (.postgres, .id): "text"
        }
    }
}

/// The `events` table's statements and column lists, made from ``EventColumn``.
enum EventsTable {
    /// The columns an event is read back through, in the order of ``selectList`` (then its shared
    /// context).
    static let readColumns: [EventColumn] = [
        .seq, .messageId, .type, .event, .userId, .anonymousId, .sessionId, .timestamp, .originalTimestamp,
        .sentAt, .receivedAt, .payload, .lifted,
    ]

    /// The column that reads an event's shared context back (NULL for one kept inline,
    /// ``SharedContexts``), after ``readColumns``.
    static let sharedContext = "(SELECT body FROM contexts WHERE contexts.id = events.context_id)"

    /// What a query selects to read events back (``StoredEventRow``).
    static let selectList = (readColumns.map(\.name) + [sharedContext]).joined(separator: ", ")

    /// Where each column is in a row of ``selectList`` (by ``EventColumn/rawValue``; -1: not read).
    static let readPositions: [Int] = EventColumn.allCases.map { readColumns.firstIndex(of: $0) ?? -1 }

    /// The place of the shared context in a row of ``selectList``.
    static var sharedContextPosition: Int { readColumns.count }

    /// The columns an insert into `dialect`'s table gives values, in the table's order: every
    /// column it has but `seq` (numbered by the database) and those in `leaving` (left NULL or to
    /// their default).
    static func insert(in dialect: SQLDialect, leaving: Set<EventColumn> = []) -> [EventColumn] {
        EventColumn.allCases.filter { $0 != .seq && $0.type(in: dialect) != nil && !leaving.contains($0) }
    }

    /// A prepared insert of one row, with a parameter per column: `INSERT INTO events (…) VALUES
    /// (?1, ?2, …)`, and where each column's value is bound (``Parameters``).
    struct RowInsert: Sendable {
        let sql: String
        let parameters: Parameters

        init(_ columns: [EventColumn]) {
            sql =
                "INSERT INTO events (\(columns.map(\.name).joined(separator: ", "))) VALUES ("
                + columns.indices.map { "?\($0 + 1)" }.joined(separator: ", ") + ")"
            parameters = Parameters(columns)
        }
    }

    /// The parameter each column's value is bound to (from 1), resolved once, so that a writer
    /// binds a row by name at the cost of an array read.
    struct Parameters: Sendable {
        private let indexes: [Int32]

        init(_ columns: [EventColumn]) {
            var indexes = [Int32](repeating: 0, count: EventColumn.allCases.count)
            for (offset, column) in columns.enumerated() { indexes[column.rawValue] = Int32(offset + 1) }
            self.indexes = indexes
        }

        /// The parameter of `column` (0: the statement does not bind it).
        @inline(__always)
        subscript(_ column: EventColumn) -> Int32 { indexes[column.rawValue] }
    }
}
