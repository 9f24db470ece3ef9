import Logging
import TouchpointCore

/// Builds the daily people (``DailyPeopleRollup``) of events stored before the rollup kept them:
/// after the upgrade to schema 20, and after a source's time zone changed. Runs in the
/// background while the collector takes events and answers, slice by slice, so no upgrade keeps
/// the collector from listening; the insights say they are partial until it is done.
///
/// Each source's row of `daily_people_state` says what is left: the events up to
/// `rebuild_through` (the newest `seq` when the build began; ingest keeps those after it),
/// walked in the order of the name-and-minute index, which holds all a slice reads (its name,
/// minute, `seq`, time and person), from the `(built_event, built_minute, built_seq)` the last
/// slice reached. A slice's bits go in with the cursor in one transaction, so a build stopped by
/// a crash or a restart resumes where it was, and a slice done twice sets no bit twice.
///
/// A deletion or retention pass that takes people out while a slice is read would have the slice
/// put them back: both count a change in `daily_people_changes`, and a slice whose count moved
/// since it began is read again.
final class DailyPeopleBackfill: Sendable {
    /// Events a slice reads.
    static let sliceSize = 20_000

    private let backend: any SQLBackend
    private let calendars: SourceCalendars
    private let logger: Logger
    private let run = Locked(Run())
    /// Slices written so far (for tests and logs).
    private let slices = Locked(0)

    /// The build's task, and whether it is to look again for what is left when it ends (a
    /// source's time zone changed while it ran).
    private struct Run {
        var task: Task<Void, Never>?
        var running = false
        var again = false
    }

    init(backend: any SQLBackend, calendars: SourceCalendars, logger: Logger) {
        self.backend = backend
        self.calendars = calendars
        self.logger = logger
    }

    /// Starts building whatever is left; a build that is running looks again before it ends.
    func start() {
        run.withLock { run in
            guard !run.running else {
                run.again = true
                return
            }
            run.running = true
            run.again = false
            run.task = Task { [self] in
                repeat {
                    do {
                        _ = try await build(size: Self.sliceSize, slices: .max)
                    } catch is CancellationError {
                    } catch {
                        logger.error(
                            "building the daily people stopped; it resumes at the next start",
                            metadata: ["error": "\(error)"])
                    }
                } while self.run.withLock { run in
                    guard run.again, !Task.isCancelled else {
                        run.running = false
                        return false
                    }
                    run.again = false
                    return true
                }
            }
        }
    }

    /// Waits for the build to finish (for tests and the benchmarks).
    func finish() async {
        await run.withLock { $0.task }?.value
    }

    /// Stops the build after its current slice (the collector closes).
    func stop() async {
        let running = run.withLock { $0.task }
        running?.cancel()
        await running?.value
    }

    /// Slices written so far.
    var slicesWritten: Int { slices.value }

    private struct Left: Sendable {
        var source: String
        var through: Int64
        var cursor: (event: String, minute: Int64, seq: Int64)?
    }

    /// Runs at most `slices` slices of `size` events now, on the caller's task (tests use this to
    /// stop a build part-way).
    /// - Returns: the slices written.
    func run(slices: Int, size: Int) async throws -> Int {
        try await build(size: size, slices: slices)
    }

    private func build(size: Int, slices limit: Int) async throws -> Int {
        var written = 0
        while !Task.isCancelled, written < limit {
            let rows = try await backend.query(
                "SELECT source, rebuild_through, built_event, built_minute, built_seq FROM daily_people_state WHERE complete = 0 ORDER BY source",
                [])
            guard let row = rows.first, let source = row[0].text, let through = row[1].int else {
                // The daily people are built: the values of kept properties next (``ValueRollup``).
                var batches = 0
                while !Task.isCancelled, written < limit,
                    try await !backend.query("SELECT 1 FROM value_rollups WHERE done < since_seq LIMIT 1", []).isEmpty
                {
                    if batches == 0 {
                        logger.notice(
                            "counting the values of kept properties in stored events in the background; breakdowns by them read the events until it is done"
                        )
                    }
                    let more = try await ValueRollup.runBatch(backend, calendars: calendars, limit: Self.sliceSize)
                    written += 1
                    batches += 1
                    guard more else {
                        logger.notice("the values of kept properties in stored events are counted")
                        break
                    }
                }
                break
            }
            var left = Left(source: source, through: through)
            if let event = row[2].text, let minute = row[3].int, let seq = row[4].int {
                left.cursor = (event, minute, seq)
            }
            logger.notice(
                "building the daily people of stored events in the background; insights are partial until it is done",
                metadata: ["source": "\(source)", "through": "\(through)"])
            var done = false
            while !Task.isCancelled, written < limit {
                let next = try await slice(left, size: size)
                written += 1
                guard let next else {
                    done = true
                    break
                }
                left = next
            }
            if done {
                logger.notice("the daily people of stored events are built", metadata: ["source": "\(source)"])
            }
        }
        return written
    }

    /// Reads and writes one slice of `size` events of `left`.
    /// - Returns: what is left after it, or nil when the source is done.
    private func slice(_ left: Left, size: Int) async throws -> Left? {
        let dialect = backend.dialect
        while true {
            try Task.checkCancellation()
            let changes = try await backend.query("SELECT changes FROM daily_people_changes", []).first?.first?.int ?? 0
            var read = SQLStatement(
                dialect,
                "SELECT event, timestamp / 60000, seq, timestamp, person_key FROM \(dialect.eventsByName) WHERE source = "
            )
            read.bind(.text(left.source))
            read.append(" AND event IS NOT NULL")
            if let cursor = left.cursor {
                read.append(" AND (event, timestamp / 60000, seq) > (")
                read.bind(.text(cursor.event))
                read.append(", ")
                read.bind(.int(cursor.minute))
                read.append(", ")
                read.bind(.int(cursor.seq))
                read.append(")")
            }
            read.append(" ORDER BY event, timestamp / 60000, seq LIMIT \(size)")
            let events = try await backend.query(read)
            var lookup = DayLookup(calendars.calendar(of: left.source))
            var entries: [DailyPeopleRollup.Entry] = []
            entries.reserveCapacity(events.count)
            var next = left
            for event in events {
                guard let name = event[0].text, let minute = event[1].int, let seq = event[2].int else { continue }
                next.cursor = (name, minute, seq)
                guard seq <= left.through, let time = event[3].int, let key = event[4].int, key != 0 else { continue }
                entries.append(
                    DailyPeopleRollup.Entry(
                        key: DailyPeopleRollup.Key(source: left.source, event: name, day: lookup.day(of: time)),
                        number: abs(key), anonymous: key < 0))
            }
            let done = events.count < size
            let rows = DailyPeopleRollup.rows(DailyPeopleRollup.grouped(entries))
            var state = SQLStatement(dialect, "UPDATE daily_people_state SET ")
            if done {
                state.append("complete = 1, built_event = NULL, built_minute = NULL, built_seq = NULL")
            } else if let cursor = next.cursor {
                state.append("built_event = ")
                state.bind(.text(cursor.event))
                state.append(", built_minute = ")
                state.bind(.int(cursor.minute))
                state.append(", built_seq = ")
                state.bind(.int(cursor.seq))
            }
            state.append(" WHERE source = ")
            state.bind(.text(left.source))
            let update = state
            let written = try await backend.write { transaction in
                // A deletion or a retention pass since the slice was read: read it again.
                guard try await SQLCollectorStorage.dailyPeopleChanges(in: transaction, dialect: dialect) == changes
                else { return false }
                for row in rows {
                    _ = try await transaction.query(
                        dialect.dailyPeopleAdd,
                        [
                            .text(row.key.source), .text(row.key.event), .int(row.key.day), .int(row.chunk),
                            .bytes(row.bits),
                        ])
                }
                _ = try await transaction.query(update)
                return true
            }
            guard written else { continue }
            slices.withLock { $0 += 1 }
            return done ? nil : next
        }
    }
}
