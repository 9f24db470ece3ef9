import TouchpointCore

/// The people a PostgreSQL collector knows it counted on recent days (``DailyPeopleRollup``), by a
/// hash of their id and side: its statement numbers people itself, so the collector cannot know
/// their numbers beforehand. An event of someone known is not given to the rollup.
///
/// What it knows holds while no deletion or retention pass has taken people out: each counts a
/// change in `daily_people_changes`, and the ingest statement gives every event to the rollup when
/// the count is not the one this memory was built at (a deletion by another collector included).
/// A hash shared by two people of one day and event would leave the second uncounted that day:
/// with 64 bits and a million people doing an event on a day, a chance of about 3 in 100 million
/// for that event and day.
final class KnownDailyIDs: Sendable {
    /// Ids kept at most (about 16 bytes each); the days used longest ago go first.
    static let maximumIDs = 2_000_000

    private struct State {
        var days: [DailyPeopleRollup.Key: (ids: Set<UInt64>, used: UInt64)] = [:]
        var count = 0
        var clock: UInt64 = 0
        /// The count of `daily_people_changes` this memory holds for; nil before the first write.
        var changes: Int64?
    }

    private let state = Locked(State())
    /// Per process, so that no sender can choose ids that share a hash.
    private let seed = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))

    /// The hash of a person's id and side.
    func hash(_ id: String, anonymous: Bool) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(seed.0)
        hasher.combine(seed.1)
        hasher.combine(anonymous)
        hasher.combine(id)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    /// Which of `people` (a day's key and a person's hash each) are not known, and the count of
    /// changes to hand the statement (nil: give it every one).
    func unknown(_ people: [(key: DailyPeopleRollup.Key, hash: UInt64)]) -> (needed: [Bool], changes: Int64?) {
        state.withLock { state in
            guard let changes = state.changes else { return (Array(repeating: true, count: people.count), nil) }
            state.clock += 1
            let needed = people.map { person -> Bool in
                guard let known = state.days[person.key] else { return true }
                state.days[person.key]?.used = state.clock
                return !known.ids.contains(person.hash)
            }
            return (needed, changes)
        }
    }

    /// Keeps what a committed statement counted, at the count of changes it read.
    func remember(_ people: [(key: DailyPeopleRollup.Key, hash: UInt64)], changes: Int64) {
        state.withLock { state in
            if state.changes != changes { state = State(changes: changes) }
            state.clock += 1
            for person in people {
                var known = state.days[person.key] ?? (ids: [], used: state.clock)
                if known.ids.insert(person.hash).inserted { state.count += 1 }
                known.used = state.clock
                state.days[person.key] = known
            }
            guard state.count > Self.maximumIDs else { return }
            for (key, known) in state.days.sorted(by: { $0.value.used < $1.value.used }) {
                guard state.count > Self.maximumIDs * 3 / 4 else { break }
                state.days[key] = nil
                state.count -= known.ids.count
            }
        }
    }

    /// Forgets everything.
    func forgetAll() {
        state.withLock { $0 = State() }
    }
}
