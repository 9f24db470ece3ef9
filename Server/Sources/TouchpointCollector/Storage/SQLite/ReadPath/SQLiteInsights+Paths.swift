import Foundation
import TouchpointCore

extension SQLiteInsights {
    /// The ways as SQLite finds them, which has no hash join (PostgreSQL's join, `PostgresInsights+Paths.swift`, is a nested
    /// loop there, the events read once per person: a day of paths at 10 M events took 66 s) and
    /// orders a window of millions of rows slowly (30 days took 22 s): each person's first start
    /// is read (the start's events only), then every event of the range, each name through its
    /// own seek of the name-and-minute index, as numbers; only the events on a way are kept and
    /// ordered here. The anchors and the merges are read in one snapshot; the events, as two
    /// halves of the range at once on two reader connections, each in a snapshot of its own.
    func paths(source: String, query: PathQuery, names: [String]) async throws -> [PathCount] {
        // Without a cohort each event's stored key is read and its merge looked up here (the
        // merges' table read once in the same snapshot) rather than in SQLite for every event.
        let joined = query.people != nil
        @Sendable func statement(_ name: String, from: Int64, to: Int64) -> SQLStatement {
            var statement = SQLStatement(
                dialect, "SELECT \(joined ? PersonKeys.expression : "events.person_key"), timestamp, seq")
            statement.appendEventsNamed(
                [name], source: source, from: from, to: to, filters: [], people: query.people, mergesJoined: joined)
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
        let (anchors, merges) = try await backend.read { connection -> ([Int64: PathStep], [Int64: Int64]) in
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
            return try await backend.read { connection in
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

/// An event on a person's way (``SQLiteInsights``' paths): its time, its order of
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
