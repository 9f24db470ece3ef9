import Foundation
import TouchpointCore

extension PostgresInsights {
    /// The ways found in SQL without repeats (`kept`, each event numbered `n` from the anchor, 1):
    /// one row per way with its people comes back. Every event of the range (and of the window
    /// beyond it) is read through the name-and-minute index, a seek per event name, never its row.
    func paths(source: String, query: PathQuery, names: [String]) async throws -> [PathCount] {
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
        statement.appendRange(
            TimeRange(from: Timestamp.date(milliseconds: read.from), to: Timestamp.date(milliseconds: read.to)))
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
}
