import TouchpointCore

/// The people SQLite's writer knows it counted on recent days (``DailyPeopleRollup``), so that a
/// write touches `daily_people` only for a person's first event of a name on a day: most events of
/// a visit are of someone already counted that day, and cost a look in memory.
///
/// What a write adds is kept only once it committed and no deletion ran since it began
/// (``remember(_:since:)``): a deletion clears bits and may hand its people's numbers to others,
/// so it forgets everything within its transaction (``forgetAll()``). Forgetting costs no
/// correctness, only a write of bits already set. At most ``maximumChunks`` chunks are kept; the
/// days used longest ago go first.
final class KnownDailyPeople: Sendable {
    /// Chunks kept at most: about 32 MB of bitmaps.
    static let maximumChunks = 65_536

    private struct Known {
        var sides: DailyPeopleRollup.Sides
        var used: UInt64
        var chunks: Int { sides.users.chunks.count + sides.anonymous.chunks.count }
    }

    private struct State {
        var days: [DailyPeopleRollup.Key: Known] = [:]
        var chunks = 0
        var clock: UInt64 = 0
        /// Counts the deletions: a write's additions are kept only when none ran since it began.
        var generation = 0
    }

    private let state = Locked(State())

    /// Of `entries`, the people not known to be counted on their days, grouped by day, and the
    /// generation to hand back to ``remember(_:since:)``. Called inside the writer's transaction.
    func unknown(_ entries: [DailyPeopleRollup.Entry]) -> (
        added: [DailyPeopleRollup.Key: DailyPeopleRollup.Sides], generation: Int
    ) {
        state.withLock { state in
            var added: [DailyPeopleRollup.Key: DailyPeopleRollup.Sides] = [:]
            state.clock += 1
            for entry in entries {
                if let known = state.days[entry.key] {
                    if known.sides.contains(entry.number, anonymous: entry.anonymous) { continue }
                    state.days[entry.key]?.used = state.clock
                }
                added[entry.key, default: DailyPeopleRollup.Sides()].insert(entry.number, anonymous: entry.anonymous)
            }
            return (added, state.generation)
        }
    }

    /// Keeps what a committed write added, unless a deletion ran since it began.
    func remember(_ added: [DailyPeopleRollup.Key: DailyPeopleRollup.Sides], since generation: Int) {
        guard !added.isEmpty else { return }
        state.withLock { state in
            guard state.generation == generation else { return }
            state.clock += 1
            for (key, sides) in added {
                var known = state.days[key] ?? Known(sides: DailyPeopleRollup.Sides(), used: state.clock)
                state.chunks -= known.chunks
                known.sides.formUnion(sides)
                known.used = state.clock
                state.chunks += known.chunks
                state.days[key] = known
            }
            guard state.chunks > Self.maximumChunks else { return }
            // The days used longest ago go until three quarters are left.
            for (key, known) in state.days.sorted(by: { $0.value.used < $1.value.used }) {
                guard state.chunks > Self.maximumChunks * 3 / 4 else { break }
                state.days[key] = nil
                state.chunks -= known.chunks
            }
        }
    }

    /// Forgets everything (a deletion of people's data, inside its transaction; retention).
    func forgetAll() {
        state.withLock { state in
            state.generation += 1
            state = State(generation: state.generation)
        }
    }

    /// Days and chunks held (for `/metrics` and tests).
    var size: (days: Int, chunks: Int) { state.withLock { ($0.days.count, $0.chunks) } }
}
