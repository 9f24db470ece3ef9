import TouchpointCore

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

extension PersonKeyCache {
    /// A known person's number.
    static let select = "SELECT person_key FROM person_keys WHERE source = ? AND person = ?"

    /// A new person's number.
    static let insert = "INSERT INTO person_keys (source, person) VALUES (?, ?) RETURNING person_key"

    /// A merge, unless the anonymous id was merged before (as `identities`: the first one wins).
    static let merge =
        "INSERT INTO person_merges (anonymous_key, user_key) VALUES (?, ?) ON CONFLICT (anonymous_key) DO NOTHING"

    /// The numbers of `people`, giving new ones theirs, on the writer's connection: those
    /// `known` has from the writes before, the others from `person_keys`.
    static func keys(
        _ people: [PersonKeys.Person], known: [PersonKeys.Person: Int64] = [:], on connection: SQLiteConnection
    ) throws -> [PersonKeys.Person: Int64] {
        var keys = known
        keys.reserveCapacity(people.count)
        func bind(_ person: PersonKeys.Person, _ statement: SQLiteStatement) throws {
            try statement.bind(1, person.source)
            try statement.bind(2, person.id)
        }
        try connection.queryEach(select, people.filter { keys[$0] == nil }, bind: bind) { person, statement in
            keys[person] = statement.integer(0)
        }
        let new = people.filter { keys[$0] == nil }
        if !new.isEmpty {
            try connection.queryEach(insert, new, bind: bind) { person, statement in
                keys[person] = statement.integer(0)
            }
        }
        return keys
    }
}
