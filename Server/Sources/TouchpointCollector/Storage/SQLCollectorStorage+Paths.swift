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
    /// index, a seek per event name, never its row; the ways without repeats (`kept`, each event
    /// numbered `n` from the anchor, 1) are found as each planner does best, and the database
    /// sends back one row per way with its people, not the events.
    func paths(source: String, query: PathQuery) async throws -> [PathCount] {
        let excluded = Set(query.exclude)
        let names = try await eventNames(source: source).filter { !excluded.contains($0) }
        guard names.contains(query.event) else { return [] }
        if let answer = try await fromClickHouse(source, [], query.people, { try await $0.paths(query, names: names) })
        {
            return answer
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
        if dialect == .sqlite {
            appendWaysByOrdering(query, to: &statement)
        } else {
            appendWaysByJoin(query, to: &statement)
        }
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
    /// there, the events read once per person: a day of paths at 10 M events took 66 s): one
    /// ordering of each person's events gives each its person's first start (`at`: its time;
    /// `seen`: how many starts so far) and its neighbour nearer the start; only the kept events
    /// are ordered again.
    private func appendWaysByOrdering(_ query: PathQuery, to statement: inout SQLStatement) {
        let ordered = "PARTITION BY person ORDER BY t, seq"
        let neighbour = query.direction == .after ? "LAG" : "LEAD"
        statement.append(
            """
            ), passed AS (SELECT person, event, t, seq, a, \
            MIN(CASE WHEN a = 1 THEN t END) OVER (\(ordered) ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS at, \
            SUM(a) OVER (\(ordered) ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS seen, \
            \(neighbour)(event) OVER (\(ordered)) AS nearer FROM ev)
            """)
        // The way: the anchor (the start with none before it) and the events on its side within
        // the window; each kept unless the event nearer the anchor has its name.
        let anchor = "(a = 1 AND seen = 1)"
        switch query.direction {
        case .after:
            statement.append(", kept AS (SELECT person, event, ROW_NUMBER() OVER (\(ordered)) AS n FROM passed")
            statement.append(" WHERE seen >= 1 AND t <= at + ")
        case .before:
            statement.append(
                ", kept AS (SELECT person, event, ROW_NUMBER() OVER (PARTITION BY person ORDER BY t DESC, seq DESC) AS n FROM passed"
            )
            statement.append(" WHERE (seen = 0 OR \(anchor)) AND t >= at - ")
        }
        statement.bind(.int(query.window))
        statement.append(" AND (\(anchor) OR nearer <> event))")
    }
}
