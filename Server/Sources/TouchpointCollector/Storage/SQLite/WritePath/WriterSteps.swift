import TouchpointCore

/// Where SQLite's one writer spends its time, step by step, served at `/metrics`.
///
/// Ingest on SQLite goes through one thread (``InsertCoalescer``, `SQLiteBackend`), so its time
/// per event is what bounds events a second. Each write reads the clock between its steps (nine
/// reads a write, whatever its rows) and adds what each step took to totals kept here; the
/// totals over the wall time they span say how busy the writer is (the nearer 1, the more it is
/// the limit of ingest) and which step to look at, on a running collector, without a profiler:
///
/// ```
/// touchpoint_sqlite_writer_seconds_total{step="events"} 12.5
/// touchpoint_sqlite_writes_total 5210
/// touchpoint_sqlite_write_rows_total 2084000
/// ```
///
/// Wall time on the writer's thread: a step the operating system kept off a CPU counts that wait
/// too.
///
/// Also how often a reader looked a request's sessions and keys up before its write (the
/// look-ahead, ``SQLiteEventWriter/lookAhead(_:)``) and how often it was skipped
/// because every reader had a query in hand: many skipped means the writer reads those pages
/// itself, from disk in a store larger than memory.
final class WriterSteps: Sendable {
    /// The steps of a write, in the order they run.
    enum Step: Int, CaseIterable, Sendable {
        /// Looking the rows' message keys up (``MessageKeyIndex``): which are stored already.
        case keys
        /// Adding the rows to their sessions' rows (``SessionRows``).
        case sessions
        /// Numbering the rows' people and their merges (``PersonKeys``).
        case people
        /// Adding the rows to their shared contexts' rows (``SharedContexts``).
        case contexts
        /// Inserting the events, with their index entries.
        case events
        /// Recording the new keys and each source's counts (``SourceCounts``).
        case counts
        /// Profiles, identities and merges.
        case profiles
        /// The people of each event's day (``DailyPeopleRollup``).
        case dailyPeople
        /// `COMMIT`: the pages the write changed, written to the write-ahead log.
        case commit

        /// The step's label in `/metrics`.
        var name: String {
            switch self {
            case .keys: "keys"
            case .sessions: "sessions"
            case .people: "people"
            case .contexts: "contexts"
            case .events: "events"
            case .counts: "counts"
            case .profiles: "profiles"
            case .dailyPeople: "daily_people"
            case .commit: "commit"
            }
        }
    }

    /// One write's times, read on the writer's thread as its steps end.
    struct Laps: Sendable {
        private(set) var spent = [Duration](repeating: .zero, count: Step.allCases.count)
        private var last: ContinuousClock.Instant

        /// Starts timing a write now.
        init() { last = .now }

        /// Laps that took the given times (for tests).
        init(spent: [Step: Duration]) {
            last = .now
            for (step, duration) in spent { self.spent[step.rawValue] = duration }
        }

        /// Adds the time since the last step ended (or the write began) to `step`.
        mutating func end(_ step: Step) {
            let now = ContinuousClock.Instant.now
            spent[step.rawValue] += now - last
            last = now
        }
    }

    private struct Totals {
        var spent = [Duration](repeating: .zero, count: Step.allCases.count)
        var writes = 0
        var rows = 0
        var lookAheadsRead = 0
        var lookAheadsSkipped = 0
    }

    private let totals = Locked(Totals())

    /// Adds one committed write of `rows` rows.
    func record(_ laps: Laps, rows: Int) {
        totals.withLock { totals in
            for index in totals.spent.indices { totals.spent[index] += laps.spent[index] }
            totals.writes += 1
            totals.rows += rows
        }
    }

    /// Counts one look-ahead: read on an idle reader, or skipped (every reader busy).
    func recordLookAhead(read: Bool) {
        totals.withLock { totals in
            if read { totals.lookAheadsRead += 1 } else { totals.lookAheadsSkipped += 1 }
        }
    }

    /// Look-aheads read and skipped so far.
    var lookAheads: (read: Int, skipped: Int) { totals.withLock { ($0.lookAheadsRead, $0.lookAheadsSkipped) } }

    /// Writes committed so far.
    var writes: Int { totals.withLock { $0.writes } }

    /// Rows given to the writes so far (each distinct message of a group once, stored or found).
    var rows: Int { totals.withLock { $0.rows } }

    /// The time spent on `step` so far.
    func spent(on step: Step) -> Duration { totals.withLock { $0.spent[step.rawValue] } }

    /// The totals in Prometheus text format (version 0.0.4), four metric families.
    func prometheusText() -> String {
        let totals = totals.withLock { $0 }
        var text = """
            # HELP touchpoint_sqlite_writer_seconds_total Time SQLite's writer spent on each step of its writes.
            # TYPE touchpoint_sqlite_writer_seconds_total counter

            """
        for step in Step.allCases {
            let seconds = totals.spent[step.rawValue].seconds
            text += "touchpoint_sqlite_writer_seconds_total{step=\"\(step.name)\"} \(seconds)\n"
        }
        text += """
            # HELP touchpoint_sqlite_writes_total Write transactions SQLite's writer committed for ingest.
            # TYPE touchpoint_sqlite_writes_total counter
            touchpoint_sqlite_writes_total \(totals.writes)
            # HELP touchpoint_sqlite_write_rows_total Events those writes were given (stored or found stored).
            # TYPE touchpoint_sqlite_write_rows_total counter
            touchpoint_sqlite_write_rows_total \(totals.rows)
            # HELP touchpoint_sqlite_look_aheads_total Requests looked up on a reader before their write, or not (readers busy).
            # TYPE touchpoint_sqlite_look_aheads_total counter
            touchpoint_sqlite_look_aheads_total{result="read"} \(totals.lookAheadsRead)
            touchpoint_sqlite_look_aheads_total{result="skipped"} \(totals.lookAheadsSkipped)

            """
        return text
    }
}
