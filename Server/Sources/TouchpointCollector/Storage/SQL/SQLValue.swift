/// One value bound to, or read from, a SQL statement, the same for SQLite and PostgreSQL.
///
/// The storage logic is written once against this type; each backend translates it to its
/// driver's own representation. Arrays exist for PostgreSQL's `unnest` inserts only.
enum SQLValue: Sendable, Hashable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    /// A session id compared with SQLite's `sessions.session_id`: bound as SQLite stores it there,
    /// 16 or 17 bytes when it is a UUID (``PackedID``), else text (always text for PostgreSQL).
    case id(String)
    case textArray([String])
    case intArray([Int64])
    /// Bytes: a blob in SQLite, `bytea` in PostgreSQL. Read back only from columns a query names
    /// as bytes (``SQLBackend/query(_:_:bytesAt:)``): SQLite's other blobs are packed ids, read as
    /// their text.
    case bytes([UInt8])

    var int: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value): return Int64(exactly: value.rounded())
        case .text(let value): return Int64(value)
        default: return nil
        }
    }

    var text: String? {
        switch self {
        case .text(let value), .id(let value): return value
        case .int(let value): return String(value)
        case .double(let value):
            if value.rounded() == value, let exact = Int64(exactly: value) { return String(exact) }
            return String(value)
        default: return nil
        }
    }

    var bytes: [UInt8]? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension SQLValue {
    /// `.text(value)`, or `.null` when `value` is nil.
    static func optional(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }

    /// `.int(value)`, or `.null` when `value` is nil.
    static func optional(_ value: Int64?) -> SQLValue { value.map(SQLValue.int) ?? .null }
}

/// One result row: values in the order of the statement's columns.
typealias SQLRow = [SQLValue]
