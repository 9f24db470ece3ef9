import Foundation
import TouchpointCore

extension SQLCollectorStorage {
    // MARK: Reading

    /// `source`'s definitions (``DefinitionCounts``): its `limit` most frequent event names (or
    /// only `event`), with their properties, and its traits.
    func definitions(source: String, event: String?, limit: Int) async throws -> Definitions {
        var names = SQLStatement(
            dialect,
            "SELECT event, CAST(SUM(events) AS BIGINT), MAX(last_seen), COUNT(*) FROM definitions WHERE source = ")
        names.bind(.text(source))
        names.append(" AND kind = 'event'")
        if let event {
            names.append(" AND event = ")
            names.bind(.text(event))
        }
        names.append(" GROUP BY event HAVING SUM(events) > 0 ORDER BY 2 DESC, event LIMIT ")
        names.bind(.int(Int64(limit + 1)))
        var rowsRead = 0
        var groups = 0
        var events: [EventDefinition] = []
        for row in try await backend.query(names) {
            guard let name = row[0].text, let count = row[1].int, let lastSeen = row[2].int else { continue }
            rowsRead += Int(row[3].int ?? 1)
            groups += 1
            events.append(
                EventDefinition(
                    name: name, events: Int(count), lastSeen: Timestamp.date(milliseconds: lastSeen), properties: []))
        }
        let truncated = events.count > limit
        if truncated { events.removeLast() }

        var keys = SQLStatement(
            dialect,
            "SELECT kind, event, property, type, CAST(SUM(events) AS BIGINT), MAX(last_seen), COUNT(*) FROM definitions WHERE source = "
        )
        keys.bind(.text(source))
        keys.append(" AND (kind = 'trait' OR kind = 'property'")
        if truncated || event != nil {
            // Only the listed events' properties.
            keys.append(" AND event IN ")
            keys.bindTuple(events.isEmpty ? [.text("")] : events.map { .text($0.name) })
        }
        keys.append(") GROUP BY kind, event, property, type HAVING SUM(events) > 0")
        // Names and keys by their bytes, as the database groups them.
        var properties: [ExactText: [ExactText: PropertyDefinition]] = [:]
        var traits: [ExactText: PropertyDefinition] = [:]
        for row in try await backend.query(keys) {
            guard let kind = row[0].text, let name = row[1].text, let property = row[2].text,
                let type = row[3].text.flatMap(PropertyType.init(rawValue:)), let count = row[4].int,
                let lastSeen = row[5].int
            else { continue }
            rowsRead += Int(row[6].int ?? 1)
            groups += 1
            let seen = Timestamp.date(milliseconds: lastSeen)
            if kind == DefinitionCounts.Kind.trait.rawValue {
                traits[ExactText(property), default: PropertyDefinition(name: property)].add(type, Int(count), seen)
            } else {
                properties[ExactText(name), default: [:]][
                    ExactText(property), default: PropertyDefinition(name: property)
                ]
                .add(type, Int(count), seen)
            }
        }
        for index in events.indices {
            events[index].properties = PropertyDefinition.sorted(properties[ExactText(events[index].name)] ?? [:])
        }
        // PostgreSQL's writes add rows of their own: fold them when reads find many.
        if rowsRead - groups > DefinitionCounts.foldAbove {
            try? await DefinitionCounts.fold(source: source, in: backend)
        }
        return Definitions(
            events: events, traits: PropertyDefinition.sorted(traits), truncated: truncated,
            complete: try await definitionsBackfill().isComplete)
    }

    /// How far the count of the events stored before schema 21 got (``DefinitionsBackfill``).
    func definitionsBackfill() async throws -> DefinitionsBackfill.Progress {
        try await BackfillProgress.read("definitions_backfill", in: backend)
    }

    func backfillDefinitions(limit: Int) async throws -> DefinitionsBackfill.Progress {
        try await DefinitionsBackfill.runBatch(backend, limit: limit)
    }

    func backfillEventMinutes(limit: Int) async throws -> BackfillProgress {
        try await EventMinutes.runBatch(backend, limit: limit)
    }

    /// Whether the events per minute count every stored event (``EventMinutes``); once they do,
    /// they always will.
    func eventMinutesComplete() async throws -> Bool {
        try await eventMinutes.complete()
    }

    /// The `limit` event names with the most events of `source` in `range` (by the events' own
    /// time), most first: the names the definitions know (the 10,000 most frequent), counted from
    /// the events per minute (``EventMinutes``), a row a minute, once they count every stored
    /// event; the parts of a minute at either end of the range (and the whole range before then)
    /// through the name-and-minute index.
    func topEvents(source: String, range: TimeRange, limit: Int) async throws -> [(name: String, count: Int)] {
        var known = SQLStatement(dialect, "SELECT event FROM definitions WHERE source = ")
        known.bind(.text(source))
        known.append(" AND kind = 'event' GROUP BY event HAVING SUM(events) > 0 ORDER BY SUM(events) DESC LIMIT 10000")
        let names = try await backend.query(known).compactMap { $0[0].text }
        guard !names.isEmpty else { return [] }
        var counts: [ExactText: Int64] = [:]
        // `timestamp / 60000` truncates: minute 0 holds the last minute before 1970 as well.
        let to = range.toMilliseconds
        let end = to.map { $0 / 60_000 }
        guard let from = range.fromMilliseconds, from > 0, case let first = (from + 59_999) / 60_000,
            end.map({ first < $0 }) ?? true, try await eventMinutesComplete()
        else {
            counts = try await eventCountsFromIndex(source: source, names: names, range: range)
            return Self.top(counts, limit: limit)
        }
        // By name as well: the key (source, event, minute) then seeks each name's minutes of the
        // range instead of reading every minute the source has kept.
        var statement = SQLStatement(
            dialect, "SELECT event, CAST(SUM(events) AS BIGINT) FROM event_minutes WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND event IN ")
        statement.bindTuple(names.map { .text($0) })
        statement.append(" AND minute >= ")
        statement.bind(.int(first))
        if let end {
            statement.append(" AND minute < ")
            statement.bind(.int(end))
        }
        statement.append(" GROUP BY event")
        for row in try await backend.query(statement) {
            guard let name = row[0].text, let count = row[1].int else { continue }
            counts[ExactText(name), default: 0] += count
        }
        var edges: [TimeRange] = []
        if from < first * 60_000 {
            edges.append(TimeRange(from: range.from, to: Timestamp.date(milliseconds: first * 60_000)))
        }
        if let to, let end, end * 60_000 < to {
            edges.append(TimeRange(from: Timestamp.date(milliseconds: end * 60_000), to: range.to))
        }
        for edge in edges {
            counts.merge(try await eventCountsFromIndex(source: source, names: names, range: edge), uniquingKeysWith: +)
        }
        return Self.top(counts, limit: limit)
    }

    /// The `limit` names with the most events, most first (ties by name, bytewise).
    private static func top(_ counts: [ExactText: Int64], limit: Int) -> [(name: String, count: Int)] {
        counts.filter { $0.value > 0 }
            .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(max(limit, 0)).map { ($0.key.text, Int($0.value)) }
    }

    /// Events of each of `names` in `range`, counted through the name-and-minute index.
    private func eventCountsFromIndex(source: String, names: [String], range: TimeRange) async throws
        -> [ExactText: Int64]
    {
        var statement = SQLStatement(dialect, "SELECT event, COUNT(*) FROM \(dialect.eventsByName) WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND event IN ")
        statement.bindTuple(names.map { .text($0) })
        statement.appendRange(range)
        statement.append(" GROUP BY event")
        var counts: [ExactText: Int64] = [:]
        for row in try await backend.query(statement) {
            guard let name = row[0].text, let count = row[1].int else { continue }
            counts[ExactText(name), default: 0] += count
        }
        return counts
    }

    // MARK: Arrivals

    func arrivalsPerMinute(source: String, range: TimeRange) async throws -> [MinuteCount] {
        var statement = SQLStatement(
            dialect, "SELECT minute, CAST(SUM(events) AS BIGINT) FROM arrivals WHERE source = ")
        statement.bind(.text(source))
        if let from = range.fromMilliseconds {
            statement.append(" AND minute >= ")
            statement.bind(.int(SQLStatement.minute(from)))
        }
        if let to = range.toMilliseconds {
            // The minute holding `to` counts when `to` is inside it.
            statement.append(" AND minute < ")
            statement.bind(.int(SQLStatement.minute(to + 59_999)))
        }
        statement.append(" GROUP BY minute ORDER BY minute")
        return try await backend.query(statement).compactMap { row in
            guard let minute = row[0].int, let count = row[1].int, count > 0 else { return nil }
            return MinuteCount(minute: Timestamp.date(milliseconds: minute * 60_000), count: Int(count))
        }
    }

    // MARK: Deleting

    /// The columns a statement that deletes events returns after `context_id`, for
    /// ``forgetDefinitions(of:at:in:dialect:)``.
    static let definedColumns = "seq, source, type, event, lifted, payload, timestamp"

    /// Takes deleted events off their sources' definitions and events per minute (their values'
    /// too, ``ValueRollup``), in the deleting transaction: `rows` are what the delete returned, ``definedColumns`` from column `offset`
    /// on. An event stored before schema 21 (for the definitions) or 23 (for the minutes) that the
    /// backfill has not counted yet is not taken off (the backfill, which takes turns with this
    /// through its row, no longer finds it).
    static func forgetDefinitions(
        of rows: [SQLRow], at offset: Int, rollups: KeptProperties, in transaction: any SQLTransaction,
        dialect: SQLDialect
    )
        async throws
    {
        guard !rows.isEmpty else { return }
        let progress = try await DefinitionsBackfill.progress(in: transaction, dialect: dialect)
        var counts = DefinitionCounts()
        for row in rows {
            guard let seq = row[offset].int, progress.counts(seq), let event = StoredDefinedEvent(row, at: offset + 1),
                let shape = event.shape
            else { continue }
            counts.add(shape, count: -1, lastSeen: 0)
        }
        for statement in DefinitionCounts.statements(dialect, counts.changes) {
            _ = try await transaction.query(statement)
        }
        let minutes = try await EventMinutes.progress(in: transaction, dialect: dialect)
        var changes = EventMinutes.removing(rows, at: offset, progress: minutes)
        let sources = Set(rows.compactMap { $0[offset + 1].text }).filter { !rollups.properties(of: $0).isEmpty }
        let counted = try await ValueRollup.progress(in: transaction, dialect: dialect, sources: sources)
        for (key, change) in EventMinutes.removingValues(rows, at: offset, rollups: rollups, progress: counted) {
            changes[key, default: 0] += change
        }
        try await EventMinutes.apply(changes, in: transaction, dialect: dialect)
    }
}

/// An event as stored, read back for its definitions (``DefinitionCounts/Shape``): by deletion,
/// retention and the backfill.
struct StoredDefinedEvent {
    var source: String
    var type: MessageType
    var event: String?
    var lifted: StoredPayload.Lifted
    var payload: String
    var receivedAt: Int64 = 0

    /// Reads `source, type, event, lifted, payload` from `row`, from column `offset` on.
    init?(_ row: SQLRow, at offset: Int) {
        guard let source = row[offset].text, let type = row[offset + 1].text.flatMap(MessageType.init(rawValue:)),
            let lifted = row[offset + 3].int, let payload = row[offset + 4].text
        else { return nil }
        self.source = source
        self.type = type
        event = row[offset + 2].text
        self.lifted = StoredPayload.Lifted(rawValue: lifted)
        self.payload = payload
    }

    /// What the event added to its source's definitions: the keys of its stored payload's
    /// `properties` (the whole payload when SQLite kept only that, ``StoredPayload/Lifted/properties``)
    /// or `traits`.
    var shape: DefinitionCounts.Shape? {
        guard let member = PropertyKeyReader.member(of: type, named: event != nil) else { return nil }
        var payload = payload
        let keys = payload.withUTF8 { bytes in
            lifted.contains(.properties)
                ? PropertyKeyReader.keys(ofObject: bytes) : PropertyKeyReader.keys(ofMember: member, in: bytes)
        }
        switch type {
        case .identify:
            guard let keys, !keys.isEmpty else { return nil }
            return DefinitionCounts.Shape(source: source, event: "", isTraits: true, keys: keys)
        default:
            return DefinitionCounts.Shape(source: source, event: event ?? "", isTraits: false, keys: keys ?? [])
        }
    }
}
