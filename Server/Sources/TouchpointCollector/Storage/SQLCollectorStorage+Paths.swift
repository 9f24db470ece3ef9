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
    /// index, a seek per event name, never its row; window functions order each person's events
    /// and the database sends back one row per way with its people, not the events.
    func paths(source: String, query: PathQuery) async throws -> [PathCount] {
        let excluded = Set(query.exclude)
        let names = try await eventNames(source: source).filter { !excluded.contains($0) }
        guard names.contains(query.event) else { return [] }
        let order = query.direction == .after ? "t, seq" : "t DESC, seq DESC"
        var statement = SQLStatement(
            dialect, "WITH ev AS (SELECT \(PersonKeys.expression) AS person, event, timestamp AS t, seq")
        statement.append(" FROM \(dialect.eventsByName)\(PersonKeys.join) WHERE events.source = ")
        statement.bind(.text(source))
        statement.appendIsIn("event", names)
        let read = query.readRange
        appendRange(
            TimeRange(from: Timestamp.date(milliseconds: read.from), to: Timestamp.date(milliseconds: read.to)),
            to: &statement)
        if let people = query.people { statement.appendIsIn(PersonKeys.expression, people) }
        statement.append(
            "), anchor AS (SELECT person, t, seq FROM (SELECT person, t, seq, ROW_NUMBER() OVER (PARTITION BY person ORDER BY t, seq) AS n FROM ev WHERE event = "
        )
        statement.bind(.text(query.event))
        statement.append(" AND t >= ")
        statement.bind(.int(query.range.from))
        statement.append(" AND t < ")
        statement.bind(.int(query.range.to))
        statement.append(
            ") firsts WHERE n = 1), way AS (SELECT ev.person, ev.event, ev.t, ev.seq FROM ev JOIN anchor ON anchor.person = ev.person WHERE "
        )
        switch query.direction {
        case .after:
            statement.append("(ev.t > anchor.t OR (ev.t = anchor.t AND ev.seq >= anchor.seq)) AND ev.t <= anchor.t + ")
        case .before:
            statement.append("(ev.t < anchor.t OR (ev.t = anchor.t AND ev.seq <= anchor.seq)) AND ev.t >= anchor.t - ")
        }
        statement.bind(.int(query.window))
        // The anchor is the first of each person's way (n = 1); a run of one event is kept once.
        statement.append(
            "), marked AS (SELECT person, event, t, seq, LAG(event) OVER (PARTITION BY person ORDER BY \(order)) AS previous FROM way)"
                + ", kept AS (SELECT person, event, ROW_NUMBER() OVER (PARTITION BY person ORDER BY \(order)) AS n FROM marked WHERE previous IS NULL OR previous <> event)"
        )
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
}
