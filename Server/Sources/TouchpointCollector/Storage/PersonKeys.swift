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

    /// The person of `message` of `source`, and whether that is its user id; nil when it has neither id.
    static func person(source: String, message: IngestMessage) -> (person: Person, isUser: Bool)? {
        if let user = message.userId { return (Person(source: source, id: user), true) }
        if let anonymous = message.anonymousId { return (Person(source: source, id: anonymous), false) }
        return nil
    }

    /// The people of the stored rows and of the merges, each once, sorted (the order in which
    /// writers take their rows).
    static func people(of rows: [some EventRow], stored: [Bool], links: [IdentityLink]) -> [Person] {
        var people = Set<Person>(minimumCapacity: rows.count + 2 * links.count)
        for (row, isNew) in zip(rows, stored) where isNew {
            if let found = row.person { people.insert(found.person) }
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

    /// ``expression`` worked out here from an event's stored key and `merges` (each merged
    /// anonymous key, negative as events store it, and its user's key: `person_merges`), for a
    /// scan that reads keys without the join: a lookup in memory per event instead of one in
    /// the merges' table.
    static func person(ofKey key: Int64, merges: [Int64: Int64]) -> Int64 {
        key < 0 ? merges[key] ?? -key : key
    }

    /// The merge of an event without a user id: a primary-key lookup in a table of one row per
    /// merged anonymous id (SQLite), a hash join of it (PostgreSQL).
    static let join =
        " LEFT JOIN person_merges ON person_merges.anonymous_key = events.person_key AND events.person_key < 0"
}
