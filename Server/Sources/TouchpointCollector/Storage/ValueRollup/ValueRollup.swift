import Foundation
import TouchpointCore

/// A breakdown's rollup: for the properties a source names (``CollectorSource/rollupProperties``),
/// the events and people of each value per minute and per local day, kept at ingest in the rows
/// of ``EventMinutes`` and ``DailyPeopleRollup`` (schema 24), so that a trend broken down by such a
/// property reads a row per value and minute and a set per value and day instead of a row per
/// event.
///
/// ## Where the rows are
///
/// A value's rows are those of a *value source*: the source's id, the property and the value
/// joined by U+001F (``source(of:property:value:)``), with the event's own name, minute and day.
/// Every event with a name of a source that keeps a property adds to exactly one value source of
/// that property: its text (``Value/text(_:)``), or "absent" (missing or null), or "other" (any
/// other JSON type, or text over ``longestText`` bytes or holding a NUL). Source ids and property
/// names hold no control characters (checked at start), so a value source is never a source's id
/// and names one source, property and value; the values are what clients sent, but they only ever
/// add to their own source's rows.
///
/// Because they are rows of the same tables, everything that keeps those tables exact keeps these:
/// PostgreSQL's folds, the merges read with the daily people (a visitor who signs in is one
/// person), deletion (``SQLCollectorStorage/clearDailyPeople(source:events:calendar:in:dialect:)``
/// and ``EventMinutes/removingValues(_:at:rollups:progress:)`` take the deleted events off their value
/// sources too), and retention (whole local days of a source and its value sources).
///
/// ## Since when
///
/// When the collector first starts with a property, ingest counts the events stored from then on
/// (a seq above `since_seq` in `value_rollups`), and the events stored before are counted in the
/// background, a batch of seqs per transaction from the oldest (``runBatch(_:calendars:limit:)``,
/// run by ``DailyPeopleBackfill`` once the daily people are built; a restart resumes at `done`).
/// Deletion takes off only what was counted (``BackfillProgress/counts(_:)``), and takes turns
/// with a batch through the locked progress row and `daily_people_changes`. Until the count is
/// done a breakdown reads the events, so every answer is exact; after it, a breakdown reads the
/// rollup for a range that begins at the start of a local day and whose events of the property are
/// all text or absent, and the events otherwise. A change of the source's time zone counts the
/// property again (its days are local days); dropping it from the configuration deletes its rows.
enum ValueRollup {
    /// What separates a value source's parts.
    static let separator: Character = "\u{1F}"

    /// Text values longer than this (in UTF-8 bytes) count as "other".
    static let longestText = 200

    /// The properties' values a breakdown reads back from the rollup, beyond these, read the
    /// events (a property with very many values gains little from a row per value and minute).
    static let mostValues = 1_000

    /// A value as the rollup keeps it.
    enum Value: Hashable, Sendable {
        /// Text (a JSON string), as the breakdown shows it.
        case text(String)
        /// Missing or JSON null: the breakdown's "absent" series.
        case absent
        /// Any other JSON type, or text the rollup does not keep: a breakdown over it reads the events.
        case other

        /// The value of a property's JSON value (nil: absent).
        init(_ value: JSONValue?) {
            switch value {
            case .string(let text) where Self.keeps(text): self = .text(text)
            case .none, .null?: self = .absent
            default: self = .other
            }
        }

        /// Whether the rollup keeps `text` as it is: at most ``ValueRollup/longestText`` bytes, no
        /// NUL (PostgreSQL's text holds none), and in Unicode's composed normal form (NFC), not
        /// beginning with a combining mark. Swift compares strings by canonical equivalence, the
        /// databases' breakdowns by bytes; among such texts the two agree, so no two values the
        /// events' breakdown tells apart share a row here.
        static func keeps(_ text: String) -> Bool {
            guard text.utf8.count <= ValueRollup.longestText, !text.unicodeScalars.contains("\0") else { return false }
            if text.utf8.allSatisfy({ $0 < 0x80 }) { return true }
            guard text.unicodeScalars.first?.properties.canonicalCombiningClass == .notReordered else { return false }
            return text.precomposedStringWithCanonicalMapping.utf8.elementsEqual(text.utf8)
        }

        /// The part of a value source after the property.
        var tag: String {
            switch self {
            case .text(let text): "t" + text
            case .absent: "a"
            case .other: "o"
            }
        }

        /// The value a value source's tag names (nil: not a tag).
        init?(tag: Substring) {
            let scalars = tag.unicodeScalars
            switch scalars.first {
            case "t": self = .text(String(scalars.dropFirst()))
            case "a" where scalars.count == 1: self = .absent
            case "o" where scalars.count == 1: self = .other
            default: return nil
            }
        }
    }

    /// The source whose rows count `source`'s events with `value` of `property`.
    static func source(of source: String, property: String, value: Value) -> String {
        prefix(of: source, property: property) + value.tag
    }

    /// What every value source of `source`'s `property` begins with.
    static func prefix(of source: String, property: String) -> String {
        "\(source)\(separator)\(property)\(separator)"
    }

    /// What every value source of `source` begins with.
    static func prefix(of source: String) -> String { "\(source)\(separator)" }

    /// The first text after every value source that begins with `prefix` (`prefix` ends with the
    /// separator, U+001F, and U+0020 follows it).
    static func end(of prefix: String) -> String { String(prefix.dropLast()) + "\u{20}" }

    /// The value a value source of `source`'s `property` names (nil: another source's).
    static func value(ofSource name: String, source: String, property: String) -> Value? {
        let prefix = prefix(of: source, property: property)
        guard name.utf8.starts(with: prefix.utf8) else { return nil }
        return Value(tag: Substring(name.utf8.dropFirst(prefix.utf8.count)))
    }

    /// Whether `name` may be a source's id or a kept property's name: not empty, and no control
    /// character (so that no value source is a source, and each names one source and property).
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// The values of `properties` in an event's stored payload (`lifted`: ``StoredPayload/Lifted``),
    /// or in a message's payload (`lifted` 0).
    static func values(of properties: [String], payload: String, lifted: Int64) -> [Value] {
        let bare = lifted & StoredPayload.Lifted.properties.rawValue != 0
        var payload = payload
        let found = payload.withUTF8 { bytes in
            bare
                ? PropertyKeyReader.values(of: properties, inObject: bytes)
                : PropertyKeyReader.values(of: properties, inMember: "properties", of: bytes)
        }
        return properties.map { Value(found[$0]) }
    }
}

/// A source's kept property.
struct ValueRollupKey: Hashable, Sendable, Comparable {
    @ExactText var source: String
    @ExactText var property: String

    static func < (lhs: Self, rhs: Self) -> Bool { (lhs._source, lhs._property) < (rhs._source, rhs._property) }
}

/// Each source's kept properties and how far each is kept, for the writers and deletion. Set when
/// the storage is prepared (``SQLCollectorStorage/prepareValueRollup(properties:logger:)``).
final class KeptProperties: Sendable {
    private let kept = Locked([String: [String]]())

    /// `source`'s kept properties, in name order (empty: none).
    func properties(of source: String) -> [String] {
        kept.withLock { $0[source] } ?? []
    }

    /// Whether any source keeps a property.
    var isEmpty: Bool { kept.withLock { $0.isEmpty } }

    /// Every source's kept properties, read once (a writer's batch looks up each row's source in
    /// it, without taking the lock per row).
    var bySource: [String: [String]] { kept.withLock { $0 } }

    func set(_ source: String, _ properties: [String]) {
        kept.withLock { $0[source] = properties.isEmpty ? nil : properties }
    }
}

extension PropertyKeyReader {
    /// What a key sent twice (or in a `properties` member sent twice) reads as: a value that is
    /// neither text nor null, which the rollup keeps as "other" (``ValueRollup/Value/other``), so a
    /// breakdown over it reads the events.
    static let ambiguous = JSONValue.array([])

    /// The values of the keys `names` in the JSON object that fills `bytes` (the last occurrence of
    /// each); a key missing, or bytes that are not an object, give none.
    static func values(of names: [String], inObject bytes: UnsafeBufferPointer<UInt8>) -> [String: JSONValue] {
        var cursor = JSONCursor(bytes)
        cursor.skipWhitespace()
        return (try? values(of: names, at: &cursor, in: bytes, depth: 0)) ?? [:]
    }

    /// The values of the keys `names` in the object that is the top-level member `member` of the
    /// JSON object that fills `bytes`.
    static func values(of names: [String], inMember member: StaticString, of bytes: UnsafeBufferPointer<UInt8>)
        -> [String: JSONValue]
    {
        var found: [String: JSONValue] = [:]
        let occurrences = walk(member, of: bytes) { (cursor) throws(JSONParseError) in
            if cursor.next == UInt8(ascii: "{") {
                found = try values(of: names, at: &cursor, in: bytes, depth: 1)
            } else {
                found = [:]
                try cursor.skipValue(depth: 1)
            }
        }
        guard let occurrences else { return [:] }
        // The member twice: which one a database reads is its own choice.
        return occurrences > 1 ? Dictionary(uniqueKeysWithValues: names.map { ($0, Self.ambiguous) }) : found
    }

    /// The values of `names` in the object whose `{` is next at `cursor`, the cursor moved past it.
    private static func values(
        of names: [String], at cursor: inout JSONCursor, in bytes: UnsafeBufferPointer<UInt8>, depth: Int
    ) throws(JSONParseError) -> [String: JSONValue] {
        guard cursor.take(UInt8(ascii: "{")) else { return [:] }
        var found: [String: JSONValue] = [:]
        cursor.skipWhitespace()
        if cursor.take(UInt8(ascii: "}")) { return found }
        repeat {
            cursor.skipWhitespace()
            let start = cursor.offset
            let name: String
            if let plain = try cursor.readKey() {
                name = String(decoding: plain, as: UTF8.self)
            } else {
                var key = JSONCursor(UnsafeBufferPointer(rebasing: bytes[start...]))
                name = (try key.readValue(depth: depth + 1)).stringValue ?? ""
            }
            // Compared by bytes, as a database's path finds a key.
            if let kept = names.first(where: { $0.utf8.elementsEqual(name.utf8) }) {
                // A key twice: SQLite's `json_extract` reads the first, PostgreSQL the last.
                if found[kept] == nil {
                    found[kept] = try cursor.readValue(depth: depth + 1)
                } else {
                    found[kept] = Self.ambiguous
                    _ = try cursor.skipValue(depth: depth + 1)
                }
            } else {
                _ = try cursor.skipValue(depth: depth + 1)
            }
        } while try cursor.endOfMember(close: UInt8(ascii: "}"))
        return found
    }
}

// MARK: Progress and the count of the events stored before

extension ValueRollup {
    /// How far each kept property of `sources` (every source when nil) is counted: events with a
    /// seq above `last` (``BackfillProgress/last``, the newest event when it was first kept) by
    /// ingest, those up to `done` by the count of the events stored before
    /// (``runBatch(_:calendars:limit:)``). Read in `transaction` and locked until it ends
    /// (PostgreSQL), so that a deletion and a batch of the count take turns.
    static func progress(in transaction: any SQLTransaction, dialect: SQLDialect, sources: Set<String>? = nil)
        async throws -> [ValueRollupKey: BackfillProgress]
    {
        var statement = SQLStatement(dialect, "SELECT source, property, since_seq, done FROM value_rollups")
        if let sources {
            guard !sources.isEmpty else { return [:] }
            statement.append(" WHERE source IN ")
            statement.bindTuple(sources.sorted().map { .text($0) })
        }
        statement.append(dialect.lockingRead)
        var progress: [ValueRollupKey: BackfillProgress] = [:]
        for row in try await transaction.query(statement) {
            guard let source = row[0].text, let property = row[1].text, let since = row[2].int, let done = row[3].int
            else { continue }
            progress[ValueRollupKey(source: source, property: property)] = BackfillProgress(done: done, last: since)
        }
        return progress
    }

    /// The events of `source` with a name whose seq is in `after ... through` (exclusive of
    /// `after`), for a batch of the count: by seq alone, since SQLite, which keeps no statistics,
    /// would rather walk the source's entries of the name-and-minute index (every event of the
    /// source, for each batch).
    static func batchRead(_ dialect: SQLDialect, source: String, after: Int64, through: Int64) -> SQLStatement {
        var read = SQLStatement(
            dialect,
            "SELECT seq, event, timestamp, person_key, lifted, payload FROM "
                + (dialect == .sqlite ? "events NOT INDEXED" : "events") + " WHERE seq > ")
        read.bind(.int(after))
        read.append(" AND seq <= ")
        read.bind(.int(through))
        read.append(" AND source = ")
        read.bind(.text(source))
        read.append(" AND event IS NOT NULL")
        return read
    }

    /// Counts the events stored before a kept property was first kept, for the first property
    /// whose count is not done: those among the next `limit` seqs, into their values' minutes and
    /// daily people, in one transaction with its progress. A deletion or retention pass takes
    /// turns with it (the progress row and `daily_people_changes` are locked first), so none
    /// takes off what it has not counted or has it put back what was deleted.
    /// - Returns: whether any property's count is left to do.
    static func runBatch(_ backend: any SQLBackend, calendars: SourceCalendars, limit: Int) async throws -> Bool {
        let dialect = backend.dialect
        return try await backend.write { transaction in
            _ = try await SQLCollectorStorage.dailyPeopleChanges(in: transaction, dialect: dialect)
            let all = try await progress(in: transaction, dialect: dialect)
            guard let (key, progress) = all.filter({ !$0.value.isComplete }).min(by: { $0.key < $1.key }) else {
                return false
            }
            let through = min(progress.last, progress.done + Int64(max(limit, 1)))
            let read = batchRead(dialect, source: key.source, after: progress.done, through: through)
            var lookup = DayLookup(calendars.calendar(of: key.source))
            var minutes: [EventMinutes.Key: Int64] = [:]
            var entries: [DailyPeopleRollup.Entry] = []
            for row in try await transaction.query(read) {
                guard let event = row[1].text, let timestamp = row[2].int, let lifted = row[4].int,
                    let payload = row[5].text
                else { continue }
                let value = values(of: [key.property], payload: payload, lifted: lifted)[0]
                let valueSource = source(of: key.source, property: key.property, value: value)
                minutes[
                    EventMinutes.Key(source: valueSource, event: event, minute: EventMinutes.minute(of: timestamp)),
                    default: 0] += 1
                guard let person = row[3].int, person != 0 else { continue }
                entries.append(
                    DailyPeopleRollup.Entry(
                        key: DailyPeopleRollup.Key(source: valueSource, event: event, day: lookup.day(of: timestamp)),
                        number: abs(person), anonymous: person < 0))
            }
            try await EventMinutes.apply(minutes, in: transaction, dialect: dialect)
            for row in DailyPeopleRollup.rows(DailyPeopleRollup.grouped(entries)) {
                _ = try await transaction.query(
                    dialect.dailyPeopleAdd,
                    [.text(row.key.source), .text(row.key.event), .int(row.key.day), .int(row.chunk), .bytes(row.bits)])
            }
            var update = SQLStatement(dialect, "UPDATE value_rollups SET done = ")
            update.bind(.int(through))
            update.append(" WHERE source = ")
            update.bind(.text(key.source))
            update.append(" AND property = ")
            update.bind(.text(key.property))
            _ = try await transaction.query(update)
            return through < progress.last || all.contains { $0.key != key && !$0.value.isComplete }
        }
    }
}
