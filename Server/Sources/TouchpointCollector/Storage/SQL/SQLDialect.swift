/// Where SQLite's and PostgreSQL's SQL differ, so that the storage logic is written once: each
/// difference is a member here, with both databases' words side by side (and those of the
/// `sessions` table in `SQLDialect+Sessions.swift`). How each database stores events is its
/// ``EventWriter``'s; its schema is its migrations'.
enum SQLDialect: String, Sendable {
    case sqlite
    case postgres

    /// The placeholder for the `index`-th bound value (1-based): `?` or `$1`.
    func placeholder(_ index: Int) -> String {
        switch self {
        case .sqlite: return "?"
        case .postgres: return "$\(index)"
        }
    }

    /// Text at `path` inside a JSON text column (nil/NULL when absent), as text whatever its JSON type.
    func jsonText(_ column: String, _ path: [String]) -> String {
        switch self {
        case .sqlite:
            // json_extract returns SQL NULL for JSON null and for a missing member.
            return "CAST(json_extract(\(column), '$.\(path.joined(separator: "."))') AS TEXT)"
        case .postgres:
            // `json`, not `jsonb`: reading one member costs the text a pass of the lexer, where
            // `jsonb` first builds the whole document. The two read a member alike but for a
            // number written with an exponent, which `json` gives as written (`1e2`; `jsonb`
            // gives `100`). Neither converts the escape \u0000 to text, and the collector stored
            // it before it refused NUL at ingest: read such a payload with U+FFFD in its place
            // rather than fail the query, copying only the payloads that hold it. (chr(92) is the
            // backslash, whatever standard_conforming_strings says.)
            return "((\(Self.readableJSON(column)))::json #>> '{\(path.joined(separator: ","))}')"
        }
    }

    /// PostgreSQL: a JSON text column as `json` can read it (see ``jsonText(_:_:)``).
    ///
    /// Only an escape of NUL is replaced, not the text `\\u0000` (an escaped backslash, then
    /// `u0000`), which ingest keeps: each escaped backslash is first set aside as U+0001 (which
    /// valid JSON text never holds raw), so the pairs are read left to right as JSON reads them.
    static func readableJSON(_ column: String) -> String {
        let nul = "chr(92) || 'u0000'"
        let pair = "chr(92) || chr(92)"
        return
            "CASE WHEN strpos(\(column), \(nul)) > 0 THEN replace(replace(replace(\(column), \(pair), chr(1)), \(nul), chr(92) || 'ufffd'), chr(1), \(pair)) ELSE \(column) END"
    }

    /// The JSON path of `property` of an `events` row's `properties`, as an SQL expression of the
    /// row (SQLite: a payload that was only `properties` is stored as that object,
    /// ``StoredPayload/Lifted/properties``). `property` must be a plain member name.
    func propertyPath(_ property: String) -> String {
        let bit = StoredPayload.Lifted.properties.rawValue
        return "(CASE WHEN lifted & \(bit) = 0 THEN '$.properties.\(property)' ELSE '$.\(property)' END)"
    }

    /// A property of an `events` row's `properties` as text, whatever its JSON type (NULL when absent).
    func propertyText(_ property: String) -> String {
        switch self {
        case .sqlite: return "CAST(json_extract(payload, \(propertyPath(property))) AS TEXT)"
        case .postgres: return jsonText("payload", ["properties", property])
        }
    }

    /// `events` for a query that picks events by name and time: read through the name-and-minute
    /// index. SQLite is told to (the collector keeps no planner statistics, and without them it
    /// rates the minute index the same and picks by the order the indexes were made in).
    var eventsByName: String { self == .sqlite ? "events INDEXED BY events_name_minute" : "events" }

    /// The larger of two values (a scalar function, not an aggregate).
    var greatest: String { self == .sqlite ? "MAX" : "GREATEST" }

    /// The smaller of two values (a scalar function, not an aggregate).
    var least: String { self == .sqlite ? "MIN" : "LEAST" }

    /// A property of an `events` row's `properties` as the analytics compare and show it: text,
    /// with `true` and `false` for booleans in both databases (SQLite's `json_extract` gives 1 and
    /// 0), NULL when absent or null. `property` must be a ``PropertyName``.
    func analyticsPropertyText(_ property: String) -> String {
        switch self {
        case .sqlite:
            let path = propertyPath(property)
            return
                "(CASE json_type(payload, \(path)) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(json_extract(payload, \(path)) AS TEXT) END)"
        case .postgres:
            return propertyText(property)
        }
    }

    /// Appended to a read that the rest of its transaction's writes depend on: PostgreSQL locks
    /// the rows it read until the transaction ends, so that writers on other connections take
    /// turns from there; SQLite has one writer, whose transaction excludes every other.
    var lockingRead: String { self == .postgres ? " FOR UPDATE" : "" }

    /// What makes `INSERT INTO source_counts (source, events, sessions)` add to the source's
    /// counts (``SourceCounts``): SQLite keeps one row per source, which takes in the change
    /// (`excluded`); PostgreSQL adds a row per write (folded now and then).
    var sourceCountsMerge: String {
        switch self {
        case .sqlite:
            """
             ON CONFLICT (source) DO UPDATE SET events = source_counts.events + excluded.events, \
            sessions = source_counts.sessions + excluded.sessions
            """
        case .postgres: ""
        }
    }

    /// How a `profiles` row takes in a write's share of its user's events (`excluded`): the
    /// widened time range and the added count.
    var profileMerge: String {
        """
        first_seen = \(least)(profiles.first_seen, excluded.first_seen), \
        last_seen = \(greatest)(profiles.last_seen, excluded.last_seen), \
        event_count = profiles.event_count + excluded.event_count
        """
    }
}
