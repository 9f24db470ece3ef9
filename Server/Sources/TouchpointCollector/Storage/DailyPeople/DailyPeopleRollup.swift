import TouchpointCore

/// Who did what, when: for each source, event name and local day, the set of people who did it,
/// kept at ingest in the same transaction as the events (schema 20). Retention, unique and active
/// people, stickiness and lifecycle read these sets (``DailyPeople``) instead of the events, so
/// their cost follows people and days, not events.
///
/// ## The table
///
/// `daily_people (source, event, day, chunk, bits)`: `day` is the event's local day in its
/// source's time zone (``SourceCalendar``); a person is their number (``PersonKeys``), and the
/// numbers of a day are cut into chunks of 4,096 (``PersonSet``), each a row whose `bits` hold the
/// chunk (``PersonChunkEncoding``: a list of up to 255 numbers, else a 512-byte bitmap). Numbers
/// are given in the order people are first seen, so a source's people fill few chunks densely.
/// `chunk` is the chunk's index times two, plus one for the side of people who did it without a
/// user id: an event without one counts as its anonymous id's merge target when read (as the
/// events' negated `person_key` does, ``MergedPeople``), so a merge made after the events needs
/// no rewrite here, and a visitor who signs in is one person in every insight.
///
/// A bit is set exactly when a stored event has that source, name, local day and person:
/// - ingest sets the bits of the events it stores (a bit already set is left alone, so a resent
///   event changes nothing, and one that comes late or out of order lands on its own day);
/// - the deletion of a user's data clears the bits of the events it deletes, in its transaction
///   (``SQLCollectorStorage/clearDailyPeople(of:on:)``);
/// - retention deletes events by whole local days and the days' rows with them;
/// - a change of a source's time zone deletes its rows and builds them again in the background
///   from the stored events (``DailyPeopleBackfill``), as the upgrade to schema 20 does.
///
/// SQLite's one writer ORs a write's new bits into each chunk's row in place
/// (`touchpoint_bits_or`), remembering the bits of recent days (``KnownDailyPeople``) so that an
/// event of someone already counted that day costs nothing. PostgreSQL's writes run in parallel, and
/// a row that every write updated would make each wait for the commit of the one before; there a
/// write adds rows of its own, which reads OR together (a bit is idempotent) and a fold merges now
/// and then.
enum DailyPeopleRollup {
    /// The `chunk` column of a person's number on one side.
    static func chunk(of number: Int64, anonymous: Bool) -> Int64 {
        (number >> Int64(PersonSet.chunkShift)) << 1 | (anonymous ? 1 : 0)
    }

    /// A `chunk` column's chunk index and side.
    static func split(_ chunk: Int64) -> (index: Int64, anonymous: Bool) { (chunk >> 1, chunk & 1 == 1) }

    /// A source, event and local day: the rows of one day's set.
    struct Key: Hashable, Sendable {
        @ExactText var source: String
        @ExactText var event: String
        var day: Int64
    }

    /// One stored event as the rollup sees it: its day's key, its person's number and side.
    struct Entry: Sendable {
        var key: Key
        var number: Int64
        var anonymous: Bool
    }

    /// A day's people on each side, as a write adds them or a read finds them.
    struct Sides: Sendable, Equatable {
        var users = PersonSet()
        var anonymous = PersonSet()

        var isEmpty: Bool { users.isEmpty && anonymous.isEmpty }

        /// Adds a person; true when they were not in the set.
        @discardableResult
        mutating func insert(_ number: Int64, anonymous isAnonymous: Bool) -> Bool {
            isAnonymous ? anonymous.insert(number) : users.insert(number)
        }

        func contains(_ number: Int64, anonymous isAnonymous: Bool) -> Bool {
            isAnonymous ? anonymous.contains(number) : users.contains(number)
        }

        mutating func formUnion(_ other: Sides) {
            users.formUnion(other.users)
            anonymous.formUnion(other.anonymous)
        }

        /// Adds a stored `chunk` column's bits.
        /// - Throws: ``StorageError`` `corruptRow` for bits that are not a stored chunk.
        mutating func add(chunk: Int64, bits: [UInt8]) throws {
            guard let decoded = PersonChunkEncoding.decode(bits) else {
                throw StorageError(
                    code: .corruptRow,
                    message:
                        "a daily_people row holds \(bits.count) bytes that are not a chunk of people: the database was changed outside the collector"
                )
            }
            let (index, isAnonymous) = DailyPeopleRollup.split(chunk)
            if isAnonymous {
                anonymous.formUnion(chunk: index, decoded)
            } else {
                users.formUnion(chunk: index, decoded)
            }
        }

        /// The rows that hold these sets: each chunk's column and stored bits.
        var rows: [(chunk: Int64, bits: [UInt8])] {
            var rows: [(chunk: Int64, bits: [UInt8])] = []
            for (side, set) in [(false, users), (true, anonymous)] {
                for (index, chunk) in set.chunks.sorted(by: { $0.key < $1.key }) {
                    rows.append((index << 1 | (side ? 1 : 0), PersonChunkEncoding.encode(chunk)))
                }
            }
            return rows
        }
    }

    /// The entries of events, each day's people grouped once: what a write or a slice of the
    /// backfill adds.
    static func grouped(_ entries: [Entry]) -> [Key: Sides] {
        var grouped: [Key: Sides] = [:]
        for entry in entries { grouped[entry.key, default: Sides()].insert(entry.number, anonymous: entry.anonymous) }
        return grouped
    }

    /// The rows `added` puts in the table, in key order (the order writers take them).
    static func rows(_ added: [Key: Sides]) -> [(key: Key, chunk: Int64, bits: [UInt8])] {
        added.sorted { ($0.key.source, $0.key.event, $0.key.day) < ($1.key.source, $1.key.event, $1.key.day) }
            .flatMap { key, sides in sides.rows.map { (key, $0.chunk, $0.bits) } }
    }
}

/// Each source's calendar, for the writers that put events on their local days (a source the
/// collector was not told of keeps UTC). Set when the storage is prepared
/// (``SQLCollectorStorage/prepareDailyPeople(calendars:logger:)``).
final class SourceCalendars: Sendable {
    private let calendars = Locked([String: SourceCalendar]())
    /// The properties each source's breakdowns keep (``ValueRollup``), for the writers and
    /// deletion.
    let rollups = KeptProperties()

    /// The calendar of `source`.
    func calendar(of source: String) -> SourceCalendar {
        calendars.withLock { $0[source] } ?? .utc
    }

    /// Every source's calendar.
    var all: [String: SourceCalendar] { calendars.value }

    func set(_ source: String, _ calendar: SourceCalendar) {
        calendars.withLock { $0[source] = calendar }
    }
}

/// Local days of events for one write, each source's zone looked up once per stretch of one
/// offset (``DayLookup``).
struct DailyPeopleDays {
    private let calendars: SourceCalendars
    private var lookups: [String: DayLookup] = [:]

    init(_ calendars: SourceCalendars) { self.calendars = calendars }

    /// The local day of `time` in `source`'s zone.
    mutating func day(of time: Int64, source: String) -> Int64 {
        if let day = lookups[source]?.day(of: time) {
            // `day(of:)` on the optional changed the stored lookup in place.
            return day
        }
        var lookup = DayLookup(calendars.calendar(of: source))
        let day = lookup.day(of: time)
        lookups[source] = lookup
        return day
    }
}
