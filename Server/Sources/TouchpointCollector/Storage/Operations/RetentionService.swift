import Foundation
import Logging
import ServiceLifecycle
import TouchpointCore

/// Deletes what is older than each source's retention, in small batches, in the background.
///
/// A pass deletes, per source that has a retention, the events of the local days (in the source's
/// time zone) that ended more than that many days ago — whole days, so that the daily people
/// (``DailyPeopleRollup``) drop a day with its events — and those days' daily people, and the
/// sessions whose last event is that old; `batchSize` rows per statement, each its own
/// transaction, so ingest never waits for more than one batch. `touchpoint serve` runs a pass every
/// ``CollectorConfiguration/retentionInterval``.
public final class RetentionService: Sendable {
    /// What one pass deleted.
    public struct Report: Sendable, Equatable {
        /// Events deleted.
        public var events = 0
        /// Sessions deleted.
        public var sessions = 0
    }

    /// Days kept per source id; a source not here keeps everything.
    public let days: [String: Int]
    /// Each source's calendar, where its days begin.
    private let calendars: [String: SourceCalendar]
    /// Whether every source has a retention, so whole months of everyone's events may go at once
    /// (ClickHouse's partitions).
    private let everySourceExpires: Bool
    let storage: any StorageOperations
    private let clock: any WallClock
    private let logger: Logger
    private let batchSize: Int

    init(
        storage: any StorageOperations, sources: [CollectorSource], defaultDays: Int?, clock: any WallClock,
        logger: Logger, batchSize: Int = 1_000
    ) {
        var days: [String: Int] = [:]
        var calendars: [String: SourceCalendar] = [:]
        everySourceExpires = sources.allSatisfy { ($0.retentionDays ?? defaultDays) != nil }
        for source in sources {
            if let kept = source.retentionDays ?? defaultDays { days[source.id] = kept }
            calendars[source.id] = SourceCalendar(identifier: source.timeZone) ?? .utc
        }
        self.days = days
        self.calendars = calendars
        self.storage = storage
        self.clock = clock
        self.logger = logger
        self.batchSize = batchSize
    }

    /// Deletes everything older than each source's retention, batch by batch.
    @discardableResult
    public func runPass() async throws -> Report {
        var report = Report()
        let now = Timestamp.milliseconds(clock.now())
        var earliestCutoff = Int64.max
        for (source, kept) in days.sorted(by: { $0.key < $1.key }) {
            // The start of the local day that holds the limit: a day is kept whole until all of
            // it is older than the limit.
            let calendar = calendars[source] ?? .utc
            let firstDay = calendar.day(of: now - Int64(kept) * 86_400_000)
            let cutoff = calendar.start(ofDay: firstDay)
            earliestCutoff = min(earliestCutoff, cutoff)
            // ClickHouse's copy first: what this deletes below is never seen there either.
            try await storage.cutEventStore(source: source, before: cutoff)
            while true {
                let deleted = try await storage.deleteEvents(
                    source: source, beforeMinute: SQLStatement.minute(cutoff), limit: batchSize)
                report.events += deleted
                if deleted < batchSize { break }
                await Task.yield()
            }
            // After the events: what a backfill put back of them meanwhile goes too.
            try await storage.deleteDailyPeople(source: source, before: firstDay)
            while true {
                let deleted = try await storage.deleteSessions(source: source, lastBefore: cutoff, limit: batchSize)
                report.sessions += deleted
                if deleted < batchSize { break }
                await Task.yield()
            }
        }
        // ClickHouse's copy (`--events`): the months that end before every source's limit go whole.
        if everySourceExpires && earliestCutoff != .max {
            try await storage.dropEventStoreMonths(endingBy: earliestCutoff)
        }
        if report != Report() {
            logger.info(
                "retention deleted old data",
                metadata: ["events": "\(report.events)", "sessions": "\(report.sessions)"])
        }
        return report
    }
}

/// Runs a retention pass every `interval` until the collector shuts down.
struct RetentionRunner: Service {
    let retention: RetentionService
    let interval: Duration
    let logger: Logger

    func run() async throws {
        guard !retention.days.isEmpty else {
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await retention.runPass()
                } catch {
                    logger.warning("retention pass failed; retrying at the next", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
