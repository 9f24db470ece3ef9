import Foundation
import TouchpointCore

/// Who is in a cohort: people as numbers (``PersonKeys``), which every insight filters by.
extension SQLCollectorStorage {
    /// The people who did `event` at least `times` times in `from ..< to`: a count per person
    /// from the name-and-minute index.
    func peoplePerforming(source: String, event: String, times: Int, from: Int64, to: Int64) async throws
        -> Set<Int64>
    {
        var statement = SQLStatement(dialect, "SELECT person FROM (SELECT \(PersonKeys.expression) AS person")
        statement.appendEventsNamed([event], source: source, from: from, to: to, filters: [], people: nil)
        statement.append(") q GROUP BY person HAVING COUNT(*) >= ")
        statement.bind(.int(Int64(times)))
        return Set(try await backend.query(statement).compactMap { $0.first?.int })
    }

    /// Every `identify` call of a user of `source`, with the user's person number, by user and
    /// then in arrival order (through the small index of identify calls).
    func identifyPayloads(source: String) async throws -> [(person: Int64, payload: String)] {
        var statement = SQLStatement(
            dialect,
            "SELECT k.person_key, e.payload FROM events e JOIN person_keys k ON k.source = e.source AND k.person = e.user_id WHERE e.type = 'identify' AND e.source = "
        )
        statement.bind(.text(source))
        statement.append(" AND e.user_id IS NOT NULL ORDER BY e.user_id, e.seq")
        return try await backend.query(statement).compactMap { row in
            guard let person = row[0].int, let payload = row[1].text else { return nil }
            return (person, payload)
        }
    }

    /// The people of `numbers` whose id comes after `after`, by id, at most `limit`: each with
    /// their id and, for a user, when they were last seen.
    func people(source: String, numbers: Set<Int64>, after: String?, limit: Int) async throws -> [CohortMember] {
        var statement = SQLStatement(
            dialect,
            "SELECT k.person_key, k.person, p.last_seen, p.user_id FROM person_keys k LEFT JOIN profiles p ON p.source = k.source AND p.user_id = k.person WHERE k.source = "
        )
        statement.bind(.text(source))
        statement.appendIsIn("k.person_key", numbers)
        if let after {
            statement.append(" AND k.person > ")
            statement.bind(.text(after))
        }
        statement.append(" ORDER BY k.person LIMIT ")
        statement.bind(.int(Int64(limit)))
        return try await backend.query(statement).compactMap { row in
            guard let person = row[0].int, let id = row[1].text else { return nil }
            return CohortMember(
                person: person, id: id, isUser: !row[3].isNull,
                lastSeen: row[2].int.map { Timestamp.date(milliseconds: $0) })
        }
    }
}
