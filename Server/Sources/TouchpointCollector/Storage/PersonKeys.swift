import TouchpointCore

/// Who an event is, for analytics: a small integer per person, kept at ingest (schema 12).
///
/// A person is an id string of a source: an event's user id, else its anonymous id (as before,
/// the same string as a user id and as an anonymous id is the same person). `person_keys` gives
/// each one a number once. An event's `person_key` is that number, negated when the event has no
/// user id; `person_merges` maps the negated number of a merged anonymous id to its user's
/// (`identities` in numbers, the first merge winning in both). So an event's person is
/// `COALESCE(person_merges.user_key, ABS(events.person_key))`, and only events without a user id
/// can match a merge.
///
/// The name-and-minute index carries the time and the key, so trends without a breakdown,
/// funnels and retention read that index and the small merges table, never an event's row, and
/// count distinct integers.
enum PersonKeys {
    /// A person: an id of a source, hashed once, when made (an event's on its request's task).
    typealias Person = SourcedID

    /// The person of an event, and whether that is its user id; nil when it has neither id.
    static func person(of row: InsertCoalescer.Row) -> (person: Person, isUser: Bool)? { row.person }

    /// The person of `message` of `source`, and whether that is its user id; nil when it has neither id.
    static func person(source: String, message: IngestMessage) -> (person: Person, isUser: Bool)? {
        if let user = message.userId { return (Person(source: source, id: user), true) }
        if let anonymous = message.anonymousId { return (Person(source: source, id: anonymous), false) }
        return nil
    }

    /// The people of the stored rows and of the merges, each once, sorted (the order in which
    /// writers take their rows).
    static func people(of rows: [InsertCoalescer.Row], stored: [Bool], links: [IdentityLink]) -> [Person] {
        var people = Set<Person>(minimumCapacity: rows.count + 2 * links.count)
        for (row, isNew) in zip(rows, stored) where isNew {
            if let found = person(of: row) { people.insert(found.person) }
        }
        for link in links {
            people.insert(Person(source: link.source, id: link.anonymousId))
            people.insert(Person(source: link.source, id: link.userId))
        }
        return people.sorted()
    }

    /// The key an event stores: the person's number, negated for an event without a user id.
    static func eventKey(_ key: Int64, isUser: Bool) -> Int64 { isUser ? key : -key }

    /// The person of an event as a number (see the type's documentation). Needs ``join``.
    static let expression = "COALESCE(person_merges.user_key, ABS(events.person_key))"

    /// The merge of an event without a user id: a primary-key lookup in a table of one row per
    /// merged anonymous id (SQLite), a hash join of it (PostgreSQL).
    static let join =
        " LEFT JOIN person_merges ON person_merges.anonymous_key = events.person_key AND events.person_key < 0"

    // MARK: SQLite

    /// A known person's number.
    static let sqliteSelect = "SELECT person_key FROM person_keys WHERE source = ? AND person = ?"

    /// A new person's number.
    static let sqliteInsert = "INSERT INTO person_keys (source, person) VALUES (?, ?) RETURNING person_key"

    /// A merge, unless the anonymous id was merged before (as `identities`: the first one wins).
    static let sqliteMerge =
        "INSERT INTO person_merges (anonymous_key, user_key) VALUES (?, ?) ON CONFLICT (anonymous_key) DO NOTHING"

    /// The numbers of `people`, giving new ones theirs, on the writer's connection: those
    /// `known` has from the writes before, the others from `person_keys`.
    static func sqliteKeys(
        _ people: [Person], known: [Person: Int64] = [:], on connection: SQLiteConnection
    ) throws -> [Person: Int64] {
        var keys = known
        keys.reserveCapacity(people.count)
        func bind(_ person: Person, _ statement: SQLiteStatement) throws {
            try statement.bind(1, person.source)
            try statement.bind(2, person.id)
        }
        try connection.queryEach(sqliteSelect, people.filter { keys[$0] == nil }, bind: bind) { person, statement in
            keys[person] = statement.integer(0)
        }
        let new = people.filter { keys[$0] == nil }
        if !new.isEmpty {
            try connection.queryEach(sqliteInsert, new, bind: bind) { person, statement in
                keys[person] = statement.integer(0)
            }
        }
        return keys
    }

    // MARK: PostgreSQL

    /// Three parts of the ingest statement's WITH, the people bound as two arrays ($18: sources,
    /// $19: ids; each person once, sorted). `known` looks each one up (a probe of the unique index
    /// per person, written as a subquery so that the plan, prepared once, never becomes a scan of
    /// the table); `new_people` numbers the others; `people` is everyone with their number, for
    /// the events and the merges (a statement does not see the rows its own parts insert). A
    /// person another writer added after the statement's snapshot is a conflict: `DO UPDATE` (a
    /// no-op) waits for that writer and returns the row, where `DO NOTHING` would return nothing
    /// and leave the events without their number.
    static let postgresPeople = """
        known AS (SELECT s, p, (SELECT k.person_key FROM person_keys k WHERE k.source = t.s AND k.person = t.p) AS key \
        FROM unnest($18::text[], $19::text[]) AS t(s, p)), \
        new_people AS (INSERT INTO person_keys (source, person) SELECT s, p FROM known WHERE key IS NULL ORDER BY s, p \
        ON CONFLICT (source, person) DO UPDATE SET person = excluded.person RETURNING source, person, person_key), \
        people AS (SELECT s AS source, p AS person, key AS person_key FROM known WHERE key IS NOT NULL \
        UNION ALL SELECT source, person, person_key FROM new_people)
        """
}

/// The numbers SQLite's writer gave or found for the people of recent writes, so that a write
/// looks up in `person_keys` only the people it has not seen lately (a web write has about one
/// person for every two events; at millions of people each lookup read a page of the index at a
/// random place).
///
/// A number stays a person's until the deletion of that person's data deletes the row, and a
/// later write may give it to someone else; so a deletion forgets every number here within its
/// transaction (``forgetAll()``), and what a write learned is kept only when it committed and no
/// deletion ran since it began (``remember(_:since:)``). Numbers given by a write that rolled back
/// are never kept. Nothing else takes rows out of `person_keys` once the collector is open (the
/// upgrade that numbers people, schema 12, runs before).
final class PersonKeyCache: Sendable {
    private struct State {
        var entries = RecentHashes<(person: PersonKeys.Person, key: Int64)>(slots: PersonKeyCache.slots)
        /// Counts the deletions: a write's numbers are kept only when none ran since it began.
        var generation = 0
        /// People found here so far (for tests).
        var hits = 0
    }

    /// How many people it remembers at most.
    static let slots = 1 << 16

    private let state = Locked(State())

    /// The numbers remembered for `people`, and the generation to hand back to
    /// ``remember(_:since:)``. Called inside the writer's transaction.
    func keys(of people: [PersonKeys.Person]) -> (known: [PersonKeys.Person: Int64], generation: Int) {
        state.withLock { state in
            var known: [PersonKeys.Person: Int64] = [:]
            known.reserveCapacity(people.count)
            for person in people {
                if let entry = state.entries[person.hashValue], entry.person == person { known[person] = entry.key }
            }
            state.hits += known.count
            return (known, state.generation)
        }
    }

    /// Keeps the numbers a committed write used, unless a deletion ran since it began.
    func remember(_ keys: [PersonKeys.Person: Int64], since generation: Int) {
        state.withLock { state in
            guard state.generation == generation else { return }
            for (person, key) in keys { state.entries[person.hashValue] = (person, key) }
        }
    }

    /// Forgets every number (a deletion of people's data, inside its transaction).
    func forgetAll() {
        state.withLock { state in
            state.generation += 1
            state.entries = RecentHashes(slots: Self.slots)
        }
    }

    /// People whose numbers were found here so far (for tests).
    var hits: Int { state.withLock { $0.hits } }
}
