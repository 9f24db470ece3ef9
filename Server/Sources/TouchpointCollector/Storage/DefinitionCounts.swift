import TouchpointCore

/// The event names, property keys and traits each source has stored, with how many stored events
/// carry each and when the last one arrived, kept by the statements that store and delete events,
/// in their transactions (schema 21): `GET /v1/query/definitions` and the dashboard's pickers
/// read a few rows instead of every payload.
///
/// A row of `definitions` is (source, kind, event, property, type, events, last_seen):
///
/// - kind `event`: an event name (of a `track`, `page` or `screen` call), property and type empty;
/// - kind `property`: a top-level key of such an event's `properties` with the JSON type of its
///   value (``PropertyKey``);
/// - kind `trait`: a top-level key of an `identify` call's `traits`, event empty.
///
/// `events` counts the stored events (an event whose key has two types counts under the type of its
/// last value), `last_seen` is the newest `received_at` of an event that added to the row (a
/// deletion leaves it). As `source_counts` (``SourceCounts``): SQLite keeps one row per key, which
/// its one writer updates with a statement per key a write adds to; PostgreSQL's writes run in
/// parallel, so each adds rows of its own, a read sums them, and a source's rows are folded into
/// one per key now and then (``fold(source:in:)``). Deletion and retention take their events off
/// (``removing(_:)``); a row whose count reaches zero goes.
struct DefinitionCounts {
    /// PostgreSQL: a read that finds more rows than keys by this many folds the source's rows.
    static let foldAbove = 4096

    /// What a row counts.
    enum Kind: String, Sendable, CaseIterable {
        case event
        case property
        case trait
    }

    /// One row's key.
    struct Key: Hashable, Sendable, Comparable {
        @ExactText var source: String
        var kind: Kind
        @ExactText var event: String
        @ExactText var property: String
        var type: String

        static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs._source, lhs.kind.rawValue, lhs._event, lhs._property, lhs.type)
                < (rhs._source, rhs.kind.rawValue, rhs._event, rhs._property, rhs.type)
        }
    }

    /// What a change adds to one row.
    struct Change: Sendable {
        var key: Key
        var events: Int64
        /// The newest arrival among the events added (0 for a removal).
        var lastSeen: Int64
    }

    /// The keys one event adds to: its name and its properties' keys, or its traits' keys.
    /// Worked out once, on the request's task; hashed once, so that a write adds an event to
    /// the shapes it has seen with one lookup.
    struct Shape: Hashable, Sendable {
        let source: String
        /// The event name (empty for an `identify` call's traits).
        let event: String
        let isTraits: Bool
        let keys: [PropertyKey]
        private let hash: Int

        /// The shape of an event of `source`; nil when it adds to no row (a `group` or `alias`
        /// call, an unnamed page, an `identify` call without traits).
        init?(source: String, message: IngestMessage, keys: [PropertyKey]) {
            switch message.type {
            case .track, .page, .screen:
                guard let name = message.name else { return nil }
                self.init(source: source, event: name, isTraits: false, keys: keys)
            case .identify:
                guard !keys.isEmpty else { return nil }
                self.init(source: source, event: "", isTraits: true, keys: keys)
            case .group, .alias:
                return nil
            }
        }

        init(source: String, event: String, isTraits: Bool, keys: [PropertyKey]) {
            self.source = source
            self.event = event
            self.isTraits = isTraits
            self.keys = keys
            var hasher = Hasher()
            hasher.combine(source)
            hasher.combine(event)
            hasher.combine(isTraits)
            hasher.combine(keys)
            hash = hasher.finalize()
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }

        static func == (lhs: Shape, rhs: Shape) -> Bool {
            lhs.hash == rhs.hash && lhs.isTraits == rhs.isTraits && ExactText(lhs.event) == ExactText(rhs.event)
                && ExactText(lhs.source) == ExactText(rhs.source) && lhs.keys == rhs.keys
        }

        /// The rows it adds to.
        var rowKeys: [Key] {
            if isTraits {
                return keys.map {
                    Key(source: source, kind: .trait, event: "", property: $0.name, type: $0.type.rawValue)
                }
            }
            return [Key(source: source, kind: .event, event: event, property: "", type: "")]
                + keys.map {
                    Key(source: source, kind: .property, event: event, property: $0.name, type: $0.type.rawValue)
                }
        }
    }

    private var shapes: [Shape: (events: Int64, lastSeen: Int64)] = [:]

    /// Adds `count` events of `shape` (negative to take them off), the newest arriving at `lastSeen`.
    mutating func add(_ shape: Shape, count: Int64 = 1, lastSeen: Int64) {
        shapes[shape, default: (0, 0)].events += count
        if lastSeen > shapes[shape]?.lastSeen ?? 0 { shapes[shape]?.lastSeen = lastSeen }
    }

    var isEmpty: Bool { shapes.isEmpty }

    /// The changes to the rows, each key once, in key order (the order writers take their rows).
    var changes: [Change] {
        var rows: [Key: (events: Int64, lastSeen: Int64)] = [:]
        for (shape, counted) in shapes where counted.events != 0 {
            for key in shape.rowKeys {
                var row = rows[key] ?? (0, 0)
                row.events += counted.events
                row.lastSeen = max(row.lastSeen, counted.lastSeen)
                rows[key] = row
            }
        }
        return rows.filter { $0.value.events != 0 }
            .map { Change(key: $0.key, events: $0.value.events, lastSeen: $0.value.lastSeen) }
            .sorted { $0.key < $1.key }
    }

    // MARK: SQL

    /// The columns of `definitions` a change writes, in order.
    static let columns = "source, kind, event, property, type, events, last_seen"

    /// How SQLite's row of a key takes in a change (`excluded`).
    static let sqliteMerge = """
         ON CONFLICT (source, kind, event, property, type) DO UPDATE SET \
        events = definitions.events + excluded.events, last_seen = MAX(definitions.last_seen, excluded.last_seen)
        """

    /// SQLite's statement that adds one change to its row (7 parameters, in ``columns``' order).
    static let sqliteUpsert = "INSERT INTO definitions (\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?)" + sqliteMerge

    /// The statements that apply `changes` in a transaction: SQLite adds to each row and deletes
    /// the rows that reach zero; PostgreSQL appends the changes as rows (summed when read).
    static func statements(_ dialect: SQLDialect, _ changes: [Change]) -> [SQLStatement] {
        var statements: [SQLStatement] = []
        // A few hundred changes a statement (7 values each).
        for start in stride(from: 0, to: changes.count, by: 500) {
            let chunk = changes[start..<min(start + 500, changes.count)]
            var insert = SQLStatement(dialect, "INSERT INTO definitions (\(columns)) VALUES ")
            for (offset, change) in chunk.enumerated() {
                if offset > 0 { insert.append(", ") }
                insert.bindTuple(values(of: change.key) + [.int(change.events), .int(change.lastSeen)])
            }
            if dialect == .sqlite { insert.append(sqliteMerge) }
            statements.append(insert)
            // The rows a removal took to zero go (PostgreSQL's are left out when read and folded).
            let removals = chunk.filter { $0.events < 0 }
            if dialect == .sqlite, !removals.isEmpty {
                var delete = SQLStatement(
                    dialect, "DELETE FROM definitions WHERE events <= 0 AND (source, kind, event, property, type) IN (")
                for (offset, change) in removals.enumerated() {
                    delete.append(offset == 0 ? "VALUES " : ", ")
                    delete.bindTuple(values(of: change.key))
                }
                delete.append(")")
                statements.append(delete)
            }
        }
        return statements
    }

    /// A key's five values, in ``columns``' order.
    private static func values(of key: Key) -> [SQLValue] {
        [.text(key.source), .text(key.kind.rawValue), .text(key.event), .text(key.property), .text(key.type)]
    }

    /// Replaces `source`'s rows of `definitions` by one per key holding their sums (PostgreSQL,
    /// where each write appends rows), in one statement: the rows it deletes are the ones it sums;
    /// a row another write adds meanwhile is not among them and stays. A key whose events sum to
    /// zero or less is left out.
    static func fold(source: String, in backend: any SQLBackend) async throws {
        var statement = SQLStatement(
            backend.dialect, "WITH gone AS (DELETE FROM definitions WHERE source = ")
        statement.bind(.text(source))
        statement.append(
            """
             RETURNING \(columns)) INSERT INTO definitions (\(columns)) \
            SELECT source, kind, event, property, type, SUM(events), MAX(last_seen) FROM gone \
            GROUP BY source, kind, event, property, type HAVING SUM(events) > 0
            """)
        _ = try await backend.writeStatement(statement.sql, statement.binds)
    }
}
