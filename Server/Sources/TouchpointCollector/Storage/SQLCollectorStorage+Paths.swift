import Foundation
import TouchpointCore

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

    /// How many people went each way from the path's event: for each person, their first
    /// occurrence of it in the range, then their events after (or before) it within the window,
    /// nearest first, a run of one event counted once, up to the query's steps.
    ///
    /// Every event of the range (and of the window beyond it) is read through the name-and-minute
    /// index, a seek per event name, never its row. ClickHouse answers when it holds the events;
    /// PostgreSQL finds the ways without repeats in SQL (`kept`, each event numbered `n` from the
    /// anchor, 1) and sends back one row per way with its people; SQLite sends the events of the
    /// range as integers and the ways are found here (``PathStep``).
    func paths(source: String, query: PathQuery) async throws -> [PathCount] {
        let excluded = Set(query.exclude.map({ ExactText($0) }))
        let names = try await eventNames(source: source).filter { !excluded.contains(ExactText($0)) }
        guard names.contains(where: { ExactText($0) == ExactText(query.event) }) else { return [] }
        if let answer = try await fromClickHouse(source, [], query.people, { try await $0.paths(query, names: names) })
        {
            return answer
        }
        if let sqlite = backend as? SQLiteBackend {
            return try await waysBySteps(sqlite, source: source, query: query, names: names)
        }
        var statement = SQLStatement(
            dialect,
            "WITH ev AS (SELECT \(PersonKeys.expression) AS person, event, timestamp AS t, seq, CASE WHEN event = ")
        statement.bind(.text(query.event))
        statement.append(" AND timestamp >= ")
        statement.bind(.int(query.range.from))
        statement.append(" AND timestamp < ")
        statement.bind(.int(query.range.to))
        statement.append(" THEN 1 ELSE 0 END AS a")
        statement.append(" FROM \(dialect.eventsByName)\(PersonKeys.join) WHERE events.source = ")
        statement.bind(.text(source))
        statement.appendIsIn("event", names)
        let read = query.readRange
        appendRange(
            TimeRange(from: Timestamp.date(milliseconds: read.from), to: Timestamp.date(milliseconds: read.to)),
            to: &statement)
        if let people = query.people { statement.appendIsIn(PersonKeys.expression, people) }
        // `a`: a start (the event, in the range); the person's first start is their anchor.
        appendWaysByJoin(query, to: &statement)
        let columns = (1...query.steps).map { "e\($0)" }
        let pivot = (1...query.steps).map { "MAX(CASE WHEN n = \($0 + 1) THEN event END) AS e\($0)" }
        statement.append(
            " SELECT \(columns.joined(separator: ", ")), COUNT(*) FROM (SELECT person, \(pivot.joined(separator: ", ")) FROM kept WHERE n <= \(query.steps + 1) GROUP BY person) ways GROUP BY \(columns.joined(separator: ", "))"
        )
        return try await backend.query(statement).compactMap { row in
            guard let people = row[query.steps].int else { return nil }
            // A way that ended sooner has NULL from there on.
            let events = row.prefix(query.steps).prefix { !$0.isNull }.compactMap(\.text)
            return PathCount(events: events, people: Int(people))
        }
    }

    /// The ways as PostgreSQL finds them: each person's first start, hash-joined with their
    /// events; only the events of the ways are ordered.
    private func appendWaysByJoin(_ query: PathQuery, to statement: inout SQLStatement) {
        let order = query.direction == .after ? "t, seq" : "t DESC, seq DESC"
        statement.append(
            "), anchor AS (SELECT person, t, seq FROM (SELECT person, t, seq, ROW_NUMBER() OVER (PARTITION BY person ORDER BY t, seq) AS n FROM ev WHERE a = 1) firsts WHERE n = 1)"
                + ", way AS (SELECT ev.person, ev.event, ev.t, ev.seq FROM ev JOIN anchor ON anchor.person = ev.person WHERE "
        )
        switch query.direction {
        case .after:
            statement.append("(ev.t > anchor.t OR (ev.t = anchor.t AND ev.seq >= anchor.seq)) AND ev.t <= anchor.t + ")
        case .before:
            statement.append("(ev.t < anchor.t OR (ev.t = anchor.t AND ev.seq <= anchor.seq)) AND ev.t >= anchor.t - ")
        }
        statement.bind(.int(query.window))
        statement.append(
            "), marked AS (SELECT person, event, t, seq, LAG(event) OVER (PARTITION BY person ORDER BY \(order)) AS previous FROM way)"
                + ", kept AS (SELECT person, event, ROW_NUMBER() OVER (PARTITION BY person ORDER BY \(order)) AS n FROM marked WHERE previous IS NULL OR previous <> event)"
        )
    }

    /// The ways as SQLite finds them, which has no hash join (the join above is a nested loop
    /// there, the events read once per person: a day of paths at 10 M events took 66 s) and
    /// orders a window of millions of rows slowly (30 days took 22 s): each person's first start
    /// is read (the start's events only), then every event of the range, each name through its
    /// own seek of the name-and-minute index, as numbers; only the events on a way are kept and
    /// ordered here. The anchors and the merges are read in one snapshot; the events, as two
    /// halves of the range at once on two reader connections, each in a snapshot of its own.
    private func waysBySteps(
        _ sqlite: SQLiteBackend, source: String, query: PathQuery, names: [String]
    ) async throws -> [PathCount] {
        // Without a cohort each event's stored key is read and its merge looked up here (the
        // merges' table read once in the same snapshot) rather than in SQLite for every event.
        let joined = query.people != nil
        @Sendable func statement(_ name: String, from: Int64, to: Int64) -> SQLStatement {
            var statement = SQLStatement(
                dialect, "SELECT \(joined ? PersonKeys.expression : "events.person_key"), timestamp, seq")
            appendEventsNamed(
                [name], source: source, from: from, to: to, filters: [], people: query.people, mergesJoined: joined,
                to: &statement)
            return statement
        }
        let starts = statement(query.event, from: query.range.from, to: query.range.to)
        let read = query.readRange
        // One statement text for every name: only the bound name differs.
        let sql = statement(query.event, from: read.from, to: read.to).sql
        let bindAll: @Sendable ([SQLValue], SQLiteStatement) throws -> Void = { binds, statement in
            for (index, value) in binds.enumerated() { try statement.bind(Int32(index + 1), value) }
        }
        // Each person's anchor, and the merges, in one snapshot.
        let (anchors, merges) = try await sqlite.read { connection -> ([Int64: PathStep], [Int64: Int64]) in
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("COMMIT") }
            let merges = joined ? [:] : try Self.personMerges(connection)
            var anchors: [Int64: PathStep] = [:]
            try connection.queryEach(starts.sql, [starts.binds], bind: bindAll) { _, row in
                guard !row.isNull(0) else { return }
                let person = joined ? row.integer(0) : PersonKeys.person(ofKey: row.integer(0), merges: merges)
                let start = PathStep(time: row.integer(1), seq: row.integer(2), name: 0)
                if anchors[person].map({ start.precedes($0) }) ?? true { anchors[person] = start }
            }
            return (anchors, merges)
        }
        // The events of every name in `from ..< to` within the window of their person's anchor.
        @Sendable func near(from: Int64, to: Int64) async throws -> [(person: Int64, step: PathStep)] {
            let everyName = names.map { statement($0, from: from, to: to).binds }
            return try await sqlite.read { connection in
                var steps: [(person: Int64, step: PathStep)] = []
                try connection.queryEach(sql, zip(Int32(0)..., everyName), bind: { try bindAll($0.1, $1) }) {
                    element, row in
                    guard !row.isNull(0) else { return }
                    let person = joined ? row.integer(0) : PersonKeys.person(ofKey: row.integer(0), merges: merges)
                    guard let anchor = anchors[person] else { return }
                    let step = PathStep(time: row.integer(1), seq: row.integer(2), name: element.0)
                    switch query.direction {
                    case .after:
                        guard !step.precedes(anchor), step.time <= anchor.time + query.window else { return }
                    case .before:
                        guard !anchor.precedes(step), step.time >= anchor.time - query.window else { return }
                    }
                    steps.append((person, step))
                }
                return steps
            }
        }
        // SQLite reads on one core: the two halves of the range at once, on two reader
        // connections (the ways sort each person's events, so the halves' order does not matter).
        let middle = read.from / 2 + read.to / 2
        let steps: [(person: Int64, step: PathStep)]
        if middle > read.from {
            async let early = near(from: read.from, to: middle)
            let late = try await near(from: middle, to: read.to)
            steps = try await early + late
        } else {
            steps = try await near(from: read.from, to: read.to)
        }
        let counts = PathStep.ways(steps, direction: query.direction, steps: query.steps)
        return counts.map { PathCount(events: $0.key.map { names[Int($0)] }, people: $0.value) }
    }
}

/// An event on a person's way (``SQLCollectorStorage``'s paths on SQLite): its time, its order of
/// arrival and its name's place in the names read.
struct PathStep: Sendable {
    let time: Int64
    let seq: Int64
    let name: Int32

    /// Whether this event comes before `other` (by time, then arrival).
    func precedes(_ other: PathStep) -> Bool { (time, seq) < (other.time, other.seq) }

    /// How many people went each way: `steps` holds each person's anchor and the events on its
    /// side within the window; each person's events nearest the anchor first, a run of one name
    /// counted once, the anchor left out, up to `steps` names.
    static func ways(
        _ events: [(person: Int64, step: PathStep)], direction: PathQuery.Direction, steps: Int
    ) -> [[Int32]: Int] {
        let ordered = events.sorted { a, b in
            if a.person != b.person { return a.person < b.person }
            return direction == .after ? a.step.precedes(b.step) : b.step.precedes(a.step)
        }
        var counts: [[Int32]: Int] = [:]
        var index = 0
        while index < ordered.count {
            let person = ordered[index].person
            var way: [Int32] = []
            while index < ordered.count, ordered[index].person == person {
                let name = ordered[index].step.name
                if way.last != name, way.count <= steps { way.append(name) }
                index += 1
            }
            counts[Array(way.dropFirst()), default: 0] += 1
        }
        return counts
    }
}
