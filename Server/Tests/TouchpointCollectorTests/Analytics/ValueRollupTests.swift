import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// A trend broken down by a property the source keeps by value (``ValueRollup``), against the
/// answer worked out here from the messages: read from the value sources' rows where the rollup
/// answers exactly (a range from the start of a local day, once every stored event of the
/// property is counted, with text values only), from the events elsewhere; through merges, late
/// events, a change of summer time, a deletion and a retention cut; the count of the events stored
/// before a property was kept (part-way, resumed, again in another time zone); and the option
/// that names the properties.
///
/// The query API widens a range by days, weeks or months to whole local days; the tests also set
/// ranges that end within a day (and within a minute), and begin within one, as ``TrendQuery``
/// allows.
struct ValueRollupTests {
    typealias BruteForce = AnalyticsBruteForceTests
    typealias World = AnalyticsBruteForceTests.World

    static let day = AnalyticsBruteForceTests.day
    static let logger = Logger(label: "touchpoint.tests.value-rollup")
    static let kept = ["default": ["plan"]]

    /// `seconds` after `TestMessages.base`, in ms.
    static func ms(_ seconds: TimeInterval) -> Int64 {
        Timestamp.milliseconds(TestMessages.base.addingTimeInterval(seconds))
    }

    /// An event `seconds` after `TestMessages.base` with `plan` (none when nil).
    static func event(
        _ name: String, id: String, user: String?, anonymous: String?, at seconds: TimeInterval, plan: JSONValue?
    ) -> IngestMessage {
        TestMessages.ingest(
            name, id: id, session: "s-\(anonymous ?? user ?? "")", user: user, anonymous: anonymous, at: seconds,
            properties: plan.map { ["plan": $0] } ?? [:])
    }

    /// ``AnalyticsBruteForceTests/traffic(seed:shift:start:)`` (merges, aliases, a user id that is
    /// another visitor's anonymous id) with every plan text or absent: `true` becomes "trial", 3
    /// "enterprise" or "basic", and a third of the absent ones JSON null; so free, pro, team,
    /// trial, enterprise and basic, of which the two on top get a series and the rest are "other".
    static func traffic(seed: UInt64, start: TimeInterval = 0) -> [IngestMessage] {
        BruteForce.traffic(seed: seed, start: start).enumerated().map { offset, message in
            guard message.type == .track, let name = message.name else { return message }
            let plan: JSONValue?
            switch BruteForce.plan(of: message) {
            case "true": plan = "trial"
            case "3": plan = offset % 2 == 0 ? "enterprise" : "basic"
            case nil: plan = offset % 3 == 0 ? .null : nil
            case let text?: plan = .string(text)
            }
            let seconds = TimeInterval(message.timestamp - Timestamp.milliseconds(TestMessages.base)) / 1000
            return TestMessages.ingest(
                name, id: message.messageId, session: message.sessionId, user: message.userId,
                anonymous: message.anonymousId, at: seconds, properties: plan.map { ["plan": $0] } ?? [:])
        }
    }

    /// Whose people a value's series counts.
    enum ValuePeople {
        /// The people with such events on the whole local days of the interval within the range's
        /// days (the rollup's, from the values' daily people, as the totals' people are).
        case wholeDays
        /// The people with such events in the interval within the range (the events' breakdown).
        case exactRange
    }

    /// `query`'s answer worked out from the stored messages: events counted over the exact range;
    /// the totals' people those of the whole local days of each interval within the range's days
    /// (the daily people); each value's as `valuePeople` says, on the intervals where it has
    /// events; "plan" as ``AnalyticsBruteForceTests/plan(of:)`` reads it (absent and null alike).
    static func expected(_ query: TrendQuery, _ world: World, valuePeople: ValuePeople) -> TrendResult {
        let range = query.range
        let calendar = range.calendar
        typealias Daily = [Int64: Set<Int64>]
        var daily: Daily = [:]
        var dailyByValue: [String?: Daily] = [:]
        var counts: [Int64: Int] = [:]
        var countsByValue: [String?: [Int64: Int]] = [:]
        var peopleByValue: [String?: [Int64: Set<Int64>]] = [:]
        for (message, person) in zip(world.stored, world.people) where message.name == query.event {
            let value = BruteForce.plan(of: message)
            let day = calendar.day(of: message.timestamp)
            if let person, range.days.contains(day) {
                daily[day, default: []].insert(person)
                dailyByValue[value, default: [:]][day, default: []].insert(person)
            }
            guard message.timestamp >= range.from, message.timestamp < range.to else { continue }
            let index = calendar.index(of: message.timestamp, query.interval)
            counts[index, default: 0] += 1
            countsByValue[value, default: [:]][index, default: 0] += 1
            if let person { peopleByValue[value, default: [:]][index, default: []].insert(person) }
        }
        func people(_ days: [Daily], on range: ClosedRange<Int64>) -> Int {
            var union = Set<Int64>()
            for days in days { for day in range { union.formUnion(days[day] ?? []) } }
            return union.count
        }
        var totals: TrendTotals = [:]
        for entry in range.dayRanges(query.interval) {
            totals[entry.index] = TrendCount(count: counts[entry.index] ?? 0, users: people([daily], on: entry.days))
        }
        var valueTotals: [String: Int] = [:]
        for (value, points) in countsByValue {
            if let value { valueTotals[value] = points.values.reduce(0, +) }
        }
        let top = Set(
            valueTotals.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.prefix(query.topValues).map(\.key))
        let others = valueTotals.keys.filter { !top.contains($0) }
        var rows: [TrendRow] = []
        for entry in range.dayRanges(query.interval) {
            func users(_ values: [String?]) -> Int {
                switch valuePeople {
                case .wholeDays:
                    return people(values.map { dailyByValue[$0] ?? [:] }, on: entry.days)
                case .exactRange:
                    return values.reduce(into: Set<Int64>()) { $0.formUnion(peopleByValue[$1]?[entry.index] ?? []) }
                        .count
                }
            }
            for (value, points) in countsByValue where value.map(top.contains) ?? true {
                guard let count = points[entry.index], count > 0 else { continue }
                rows.append(
                    TrendRow(index: entry.index, value: value, isOther: false, count: count, users: users([value])))
            }
            let other = others.reduce(0) { $0 + (countsByValue[$1]?[entry.index] ?? 0) }
            if other > 0 {
                rows.append(
                    TrendRow(index: entry.index, value: nil, isOther: true, count: other, users: users(others)))
            }
        }
        return TrendResult.assemble(query, totals: totals, rows: rows)
    }

    /// A trend of `event` per `interval` broken down by plan, as the query API reads it, the two
    /// values on top (or `top`) with a series of their own: over `from..<to` exactly, or (`exact`
    /// false) widened to whole local days as the API widens a range by days, weeks or months.
    static func trend(
        _ event: String, _ interval: String, from: Int64, to: Int64, calendar: SourceCalendar, math: String? = nil,
        top: Int = 2, exact: Bool = true
    ) throws -> TrendQuery {
        var values = [
            "event": event, "interval": interval, "breakdown": "plan",
            "from": Timestamp.format(Timestamp.date(milliseconds: from)),
            "to": Timestamp.format(Timestamp.date(milliseconds: to)),
        ]
        values["math"] = math
        var trend = try AnalyticsParameters(now: Timestamp.date(milliseconds: to + 86_400_000), calendar: calendar) {
            values[$0]
        }.trend()
        trend.topValues = top
        let range = AnalyticsRange(from: from, to: to, calendar: calendar)
        #expect(trend.range == range.wholeDays)
        if exact { trend.range = range }
        return trend
    }

    /// A result's series by value ("t" and the text, "absent", "other"), for comparing them
    /// whatever their order.
    static func keyed(_ result: TrendResult) -> [String: [TrendPoint]] {
        Dictionary(
            uniqueKeysWithValues: result.series.map { series in
                (series.isOther ? "other" : series.value.map { "t" + $0 } ?? "absent", series.points)
            })
    }

    /// Adds 1000 to the rows of `event_minutes` of the top text value of `trend`'s answer in the
    /// first minute with any at or after `earliest` in the range, and expects the answer to show
    /// exactly that: the value's count 1000 (per row) higher in that minute's interval, nothing
    /// else changed.
    /// - Returns: the minute tampered with.
    @discardableResult
    static func expectTamperingShows(_ storage: SQLCollectorStorage, _ trend: TrendQuery, earliest: Int64)
        async throws -> Int64
    {
        let query = CollectorQuery(storage: storage)
        let before = try await query.trend(source: "default", trend)
        let value = try #require(before.series.first { !$0.isOther && $0.value != nil }?.value)
        let name = ValueRollup.source(of: "default", property: "plan", value: .text(value))
        #expect(name == "default\u{1F}plan\u{1F}t" + value)
        func rows(_ select: String, minute: Int64?) -> SQLStatement {
            var statement = SQLStatement(storage.dialect, select + " FROM event_minutes WHERE source = ")
            statement.bind(.text(name))
            statement.append(" AND event = ")
            statement.bind(.text(trend.event))
            if let minute {
                statement.append(" AND minute = ")
                statement.bind(.int(minute))
            } else {
                statement.append(" AND minute >= ")
                statement.bind(.int((earliest + 59_999) / 60_000))
                statement.append(" AND minute < ")
                statement.bind(.int(trend.range.to / 60_000))
            }
            return statement
        }
        let minute = try #require(
            try await storage.backend.query(rows("SELECT MIN(minute)", minute: nil)).first?[0].int)
        let count = try #require(try await storage.backend.query(rows("SELECT COUNT(*)", minute: minute)).first?[0].int)
        #expect(count >= 1)
        var tamper = SQLStatement(storage.dialect, "UPDATE event_minutes SET events = events + 1000 WHERE source = ")
        tamper.bind(.text(name))
        tamper.append(" AND event = ")
        tamper.bind(.text(trend.event))
        tamper.append(" AND minute = ")
        tamper.bind(.int(minute))
        let (sql, binds) = (tamper.sql, tamper.binds)
        try await storage.backend.write { transaction in _ = try await transaction.query(sql, binds) }

        let after = try await query.trend(source: "default", trend)
        let calendar = trend.range.calendar
        let position = Int(
            calendar.index(of: minute * 60_000, trend.interval) - trend.range.intervals(trend.interval).lowerBound)
        var wanted = keyed(before)
        wanted["t" + value]?[position].count += 1000 * Int(count)
        #expect(keyed(after) == wanted, "\(value) in minute \(minute), \(count) rows")
        #expect(after.totals == before.totals)
        return minute
    }

    /// Each breakdown of a and open per day, week and month, of events and of people, over each of
    /// `ranges` (each from the start of a local day): answered from the rollup, and as worked
    /// out here.
    static func expectRollupAnswers(
        _ storage: SQLCollectorStorage, _ world: World, ranges: [(from: Int64, to: Int64)], _ label: String
    ) async throws {
        let query = CollectorQuery(storage: storage)
        for (offset, range) in ranges.enumerated() {
            #expect(world.calendar.start(ofDay: world.calendar.day(of: range.from)) == range.from)
            for event in ["a", "open"] {
                for interval in ["day", "week", "month"] {
                    for (math, exact) in [(nil, true), ("users", true), (nil, false)] {
                        let trend = try Self.trend(
                            event, interval, from: range.from, to: range.to, calendar: world.calendar, math: math,
                            exact: exact)
                        let name = "\(label): \(event) per \(interval) (\(math ?? "total")) over range \(offset)"
                        let rows = try await storage.trendFromValueRollup(source: "default", query: trend)
                        #expect(rows != nil, "\(name) from the rollup, exact \(exact)")
                        let answer = try await query.trend(source: "default", trend)
                        #expect(answer == expected(trend, world, valuePeople: .wholeDays), "\(name), exact \(exact)")
                        guard offset == 0, math == nil, exact else { continue }
                        // Not a trivial answer: two values on top, "other", and absent, with people.
                        #expect(answer.series.filter { !$0.isOther && $0.value != nil }.count == 2)
                        #expect(answer.series.contains { $0.isOther && $0.total > 0 })
                        #expect(answer.series.contains { !$0.isOther && $0.value == nil && $0.total > 0 })
                        #expect(answer.series.contains { $0.points.contains { $0.users > 0 } })
                    }
                }
            }
        }
    }

    // MARK: The rollup's answers

    /// Ten days over the change to summer time in Berlin (2026-03-29, a day of 23 hours), a tenth
    /// of the events late and in reverse, and an event just before and just after the range's end
    /// in its last minute: every breakdown from the rollup equals the one worked out here, then
    /// after u4 and v4 are deleted, then after a retention cut.
    @Test(arguments: StorageKind.available)
    func breakdownsFromTheRollupHoldThroughMergesADeletionAndARetentionCut(kind: StorageKind) async throws {
        let berlin = try #require(SourceCalendar(identifier: "Europe/Berlin"))
        let start = 82 * Self.day  // 2026-03-24T00:00Z
        // 2026-04-02T13:17:30.500Z, and events at 13:17:25 and 13:17:35 (in the same minute).
        let end = start + 9 * Self.day + 47_850.5
        let edges = [
            Self.event("a", id: "edge-before", user: "edge-1", anonymous: "ea1", at: end - 5.5, plan: "pro"),
            Self.event("a", id: "edge-after", user: "edge-2", anonymous: "ea2", at: end + 4.5, plan: "team"),
            Self.event("a", id: "edge-absent", user: nil, anonymous: "ea3", at: end + 7.5, plan: nil),
        ]
        let messages = Self.traffic(seed: 60, start: start) + edges
        var late: [IngestMessage] = []
        var onTime: [IngestMessage] = []
        for (offset, message) in messages.enumerated() {
            if message.name != nil, offset % 10 == 3 { late.insert(message, at: 0) } else { onTime.append(message) }
        }
        let to = Self.ms(end)
        #expect(Timestamp.format(Timestamp.date(milliseconds: to)) == "2026-04-02T13:17:30.500Z")
        let firstDay = berlin.day(of: Self.ms(start))
        // 2026-03-25, 2026-03-29 (23 hours) and 2026-03-30 in Berlin.
        let ranges = [1, 5, 6].map { (from: berlin.start(ofDay: firstDay + $0), to: to) }
        #expect(Timestamp.format(Timestamp.date(milliseconds: ranges[1].from)) == "2026-03-28T23:00:00.000Z")
        #expect(Timestamp.format(Timestamp.date(milliseconds: ranges[2].from)) == "2026-03-29T22:00:00.000Z")
        try await withStorage(kind) { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": berlin], logger: Self.logger, build: false)
            try await storage.prepareValueRollup(properties: Self.kept, logger: Self.logger)
            try await BruteForce.store(onTime + late, in: storage)
            var world = World(messages, calendar: berlin)
            try await Self.expectRollupAnswers(storage, world, ranges: ranges, "stored")
            try await Self.expectValueRowsCountTheCountedEvents(storage, "stored")

            // u4 and v4 deleted: their events leave every value's counts and people.
            let deletion = StoredDeletion(
                id: "del_rollup", source: "default", body: "{}", suppressing: false,
                requestedAt: Timestamp.milliseconds(TestMessages.base))
            let deleted = try await storage.deleteUserData(
                deletion, userIds: ["u4"], anonymousIds: ["v4"], suppress: [])
            world.stored.removeAll { $0.userId == "u4" || $0.anonymousId == "v4" }
            #expect(deleted.events == messages.count - world.stored.count)
            #expect(deleted.events > 0)
            try await Self.expectRollupAnswers(storage, world, ranges: ranges, "after a deletion")
            try await Self.expectValueRowsCountTheCountedEvents(storage, "after a deletion")

            // Retention of 6 days on the day after the range: whole local days go, with their values.
            let sources = [
                CollectorSource(
                    id: "default", writeKey: "wk", retentionDays: 6, timeZone: berlin.identifier,
                    rollupProperties: ["plan"])
            ]
            let now = TestMessages.base.addingTimeInterval(start + 11 * Self.day)
            let retention = RetentionService(
                storage: storage, sources: sources, defaultDays: nil, clock: ManualClock(start: now),
                logger: Self.logger, batchSize: 7)
            let report = try await retention.runPass()
            let cutoff = berlin.start(ofDay: berlin.day(of: Timestamp.milliseconds(now) - 6 * 86_400_000))
            #expect(cutoff == ranges[1].from)
            let before = world.stored.count
            world.stored.removeAll { $0.timestamp < cutoff }
            #expect(report.events == before - world.stored.count)
            #expect(report.events > 0)
            try await Self.expectRollupAnswers(storage, world, ranges: ranges, "after a retention cut")
            try await Self.expectValueRowsCountTheCountedEvents(storage, "after a retention cut")
        }
    }

    /// The breakdown reads the value sources' rows: 1000 added to one of them shows in its
    /// interval; a range that does not begin at the start of a day reads the events and does not
    /// see it.
    @Test(arguments: StorageKind.available)
    func theBreakdownReadsTheValuesRows(kind: StorageKind) async throws {
        let messages = Self.traffic(seed: 70)
        try await withStorage(kind) { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
            try await storage.prepareValueRollup(properties: Self.kept, logger: Self.logger)
            try await BruteForce.store(messages, in: storage)
            let world = World(messages)
            let query = CollectorQuery(storage: storage)
            let to = Self.ms(9 * Self.day + 4_000.25)
            let trend = try Self.trend("a", "day", from: Self.ms(Self.day), to: to, calendar: .utc)
            #expect(try await storage.trendFromValueRollup(source: "default", query: trend) != nil)
            #expect(
                try await query.trend(source: "default", trend) == Self.expected(trend, world, valuePeople: .wholeDays))
            // An hour later: not the start of a day, so the events answer.
            let shifted = try Self.trend("a", "day", from: Self.ms(Self.day + 3600), to: to, calendar: .utc)
            #expect(try await storage.trendFromValueRollup(source: "default", query: shifted) == nil)
            let shiftedAnswer = try await query.trend(source: "default", shifted)
            #expect(shiftedAnswer == Self.expected(shifted, world, valuePeople: .exactRange))
            // By hours, with a filter, or of a property not kept: the events answer too.
            let hours = try Self.trend("a", "hour", from: Self.ms(Self.day), to: Self.ms(2 * Self.day), calendar: .utc)
            #expect(try await storage.trendFromValueRollup(source: "default", query: hours) == nil)
            var filtered = trend
            var pro = PropertyFilter(property: "plan", op: .equals)
            pro.value = "pro"
            filtered.filters = [pro]
            #expect(try await storage.trendFromValueRollup(source: "default", query: filtered) == nil)
            var other = trend
            other.breakdown = "country"
            #expect(try await storage.trendFromValueRollup(source: "default", query: other) == nil)

            try await Self.expectTamperingShows(storage, trend, earliest: shifted.range.from)
            #expect(try await query.trend(source: "default", shifted) == shiftedAnswer)
        }
    }

    /// A property first kept once events are stored: ingest counts the events stored since, and
    /// the events stored before are counted in the background, a batch of seqs at a time. Until
    /// that count is done every breakdown reads the events (nil from the rollup). Part-way through
    /// it, a deletion takes off the rows of only what was counted (by a batch or by ingest), and new
    /// events and late ones (of times long before) are counted by ingest. Once it is done, every
    /// range, before the property was kept and after, is answered from the rollup, exactly, and
    /// the values' rows hold each stored event once.
    @Test(arguments: StorageKind.available)
    func aPropertyKeptLaterIsCountedInTheBackgroundThenReadForEveryRange(kind: StorageKind) async throws {
        // The newest event before the property is kept is u4's (not counted when u4 is deleted),
        // and an event of the same value, name and minute is stored after it (counted by ingest).
        let earlier =
            Self.traffic(seed: 80)
            + [Self.event("open", id: "u4-uncounted", user: "u4", anonymous: "v4", at: 3 * Self.day + 600, plan: "pro")]
        let later =
            [Self.event("open", id: "same-minute", user: "w1", anonymous: "wa1", at: 3 * Self.day + 610, plan: "pro")]
            + Self.traffic(seed: 81, start: 12 * Self.day)
        let late = Self.traffic(seed: 82, start: Self.day)
        let half = later.count / 2
        // Ranges of the days of the events stored before the property was kept (0 to 9), across
        // them and the days after, after them, and all.
        let ranges = [
            (from: Self.ms(2 * Self.day), to: Self.ms(9 * Self.day)),
            (from: Self.ms(5 * Self.day), to: Self.ms(16 * Self.day + 25_200.5)),
            (from: Self.ms(11 * Self.day), to: Self.ms(21 * Self.day + 12_345.5)),
            (from: Self.ms(0), to: Self.ms(23 * Self.day)),
        ]
        try await withStorage(kind) { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
            try await BruteForce.store(earlier, in: storage)
            try await storage.prepareValueRollup(properties: Self.kept, logger: Self.logger, build: false)
            let since = try await Self.newestSeq(storage)
            #expect(since >= earlier.count)
            #expect(try await Self.progress(storage) == Self.Progress(since: since, done: 0))
            try await BruteForce.store(Array(later[..<half]), in: storage)
            // Ingest counts the events stored since, and none before.
            #expect(try await Self.valueEvents(storage) == Int64(later[..<half].filter { $0.name != nil }.count))
            try await Self.expectValueRowsCountTheCountedEvents(storage, "before the count")
            var world = World(earlier + later[..<half])
            try await Self.expectEventsAnswer(storage, world, ranges: ranges, "before the count")

            // Three batches of 40 seqs: the count is part-way.
            for batch in 1...3 {
                #expect(try await ValueRollup.runBatch(storage.backend, calendars: storage.calendars, limit: 40))
                #expect(try await Self.progress(storage) == Self.Progress(since: since, done: Int64(40 * batch)))
            }
            let done: Int64 = 120
            try await Self.expectValueRowsCountTheCountedEvents(storage, "part-way")
            #expect(try await Self.valueEvents(storage) > Int64(later[..<half].filter { $0.name != nil }.count))
            try await Self.expectEventsAnswer(storage, world, ranges: ranges, "part-way")

            // u4 and v4 deleted part-way: events a batch counted, events not counted yet, and
            // events ingest counted.
            let seqs = try await storage.backend.query(
                "SELECT seq FROM events WHERE event IS NOT NULL AND (user_id = 'u4' OR anonymous_id = 'v4')", []
            ).compactMap { $0[0].int }
            #expect(seqs.contains { $0 <= done }, "\(seqs)")
            #expect(seqs.contains(since), "\(seqs)")
            #expect(seqs.contains { $0 > since }, "\(seqs)")
            let deletion = StoredDeletion(
                id: "del_part_way", source: "default", body: "{}", suppressing: false,
                requestedAt: Timestamp.milliseconds(TestMessages.base))
            let deleted = try await storage.deleteUserData(
                deletion, userIds: ["u4"], anonymousIds: ["v4"], suppress: [])
            let stored = world.stored.count
            world.stored.removeAll { $0.userId == "u4" || $0.anonymousId == "v4" }
            #expect(deleted.events == stored - world.stored.count)
            try await Self.expectValueRowsCountTheCountedEvents(storage, "after a deletion part-way")
            try await Self.expectEventsAnswer(storage, world, ranges: ranges, "after a deletion part-way")

            // New events, and late ones of the days before the property was kept (u4 and v4 among
            // them again), stored part-way.
            let more = Array(later[half...]) + late
            try await BruteForce.store(more, in: storage)
            world.sent += more
            world.stored += more
            #expect(try await Self.progress(storage) == Self.Progress(since: since, done: done))
            try await Self.expectValueRowsCountTheCountedEvents(storage, "new and late events part-way")
            try await Self.expectEventsAnswer(storage, world, ranges: ranges, "new and late events part-way")

            // The rest of the count, as the collector runs it.
            storage.backfill.start()
            await storage.backfill.finish()
            #expect(try await Self.progress(storage) == Self.Progress(since: since, done: since))
            #expect(try await !ValueRollup.runBatch(storage.backend, calendars: storage.calendars, limit: 40))
            try await Self.expectValueRowsHoldTheStoredEvents(storage, world, "counted")
            try await Self.expectRollupAnswers(storage, world, ranges: ranges, "counted")
            // A range of the days before the property was kept reads the values' rows.
            let trend = try Self.trend("open", "day", from: ranges[0].from, to: ranges[0].to, calendar: .utc)
            try await Self.expectTamperingShows(storage, trend, earliest: ranges[0].from)
        }
    }

    /// The count of the events stored before a property was kept, stopped part-way (the collector
    /// closed), resumes where it was when the collector starts again with the same properties:
    /// nothing is counted twice, nothing missed.
    @Test(arguments: StorageKind.available)
    func aCountStoppedPartWayResumesWhereItWas(kind: StorageKind) async throws {
        let earlier = Self.traffic(seed: 84)
        let later = Self.traffic(seed: 85, start: 12 * Self.day)
        try await TestDatabase.with(kind) { database in
            let first = try await database.storage()
            let since: Int64
            let counted: Int64
            do {
                try await first.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
                try await BruteForce.store(earlier, in: first)
                try await first.prepareValueRollup(properties: Self.kept, logger: Self.logger, build: false)
                since = try await Self.newestSeq(first)
                // Two batches of 40 seqs, then the collector is gone.
                for _ in 0..<2 {
                    #expect(try await ValueRollup.runBatch(first.backend, calendars: first.calendars, limit: 40))
                }
                #expect(try await Self.progress(first) == Self.Progress(since: since, done: 80))
                try await Self.expectValueRowsCountTheCountedEvents(first, "stopped part-way")
                counted = try await Self.valueEvents(first)
                #expect(counted > 0)
                try await first.close()
            } catch {
                try? await first.close()
                throw error
            }

            let second = try await database.storage()
            do {
                try await second.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
                try await second.prepareValueRollup(properties: Self.kept, logger: Self.logger, build: false)
                // Where it was, with its rows.
                #expect(try await Self.progress(second) == Self.Progress(since: since, done: 80))
                #expect(try await Self.valueEvents(second) == counted)
                try await BruteForce.store(later, in: second)
                let world = World(earlier + later)
                let ranges = [
                    (from: Self.ms(2 * Self.day), to: Self.ms(9 * Self.day)),
                    (from: Self.ms(5 * Self.day), to: Self.ms(16 * Self.day + 25_200.5)),
                ]
                try await Self.expectEventsAnswer(second, world, ranges: ranges, "reopened")
                // The batches left: from seq 80 on, not from the first.
                var batches: Int64 = 0
                var more = true
                while more {
                    more = try await ValueRollup.runBatch(second.backend, calendars: second.calendars, limit: 40)
                    batches += 1
                }
                #expect(batches == (since - 80 + 39) / 40)
                #expect(try await Self.progress(second) == Self.Progress(since: since, done: since))
                try await Self.expectValueRowsHoldTheStoredEvents(second, world, "resumed")
                try await Self.expectRollupAnswers(second, world, ranges: ranges, "resumed")
                try await second.close()
            } catch {
                try? await second.close()
                throw error
            }
        }
    }
    /// A number, a boolean or a long text of plan in the range: the events answer, showing them as
    /// their text; a range without them (or with one only after its end, in its last minute) is
    /// answered from the rollup.
    @Test(arguments: StorageKind.available)
    func aValueOfAnotherTypeInTheRangeReadsTheEvents(kind: StorageKind) async throws {
        let end = 9 * Self.day + 18_000.25  // 05:00:00.250 on day 9
        let long = String(repeating: "x", count: ValueRollup.longestText + 1)
        let messages =
            Self.traffic(seed: 90) + [
                Self.event("a", id: "number", user: "n1", anonymous: "na1", at: 4 * Self.day + 43_200, plan: 3),
                Self.event("a", id: "flag", user: nil, anonymous: "na2", at: 4 * Self.day + 46_800, plan: true),
                Self.event("a", id: "flag-2", user: "u2", anonymous: nil, at: 4 * Self.day + 50_400, plan: false),
                Self.event(
                    "b", id: "long", user: "n3", anonymous: "na3", at: 6 * Self.day + 36_000, plan: .string(long)),
                // In the last minute of the ranges: before their end, and after it.
                Self.event("signup", id: "inside", user: "n4", anonymous: "na4", at: end - 0.25, plan: 8),
                Self.event("open", id: "outside", user: "n5", anonymous: "na5", at: end + 20, plan: 7),
            ]
        try await withStorage(kind) { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
            try await storage.prepareValueRollup(properties: Self.kept, logger: Self.logger)
            try await BruteForce.store(messages, in: storage)
            let world = World(messages)
            let query = CollectorQuery(storage: storage)
            let to = Self.ms(end)
            let fallbacks: [(event: String, from: Int64, shown: [String])] = [
                ("a", Self.ms(Self.day), ["3", "true", "false"]), ("b", Self.ms(Self.day), [long]),
                ("signup", Self.ms(5 * Self.day), ["8"]),
            ]
            for (event, from, shown) in fallbacks {
                for interval in ["day", "week", "month"] {
                    for top in [2, 20] {
                        let trend = try Self.trend(event, interval, from: from, to: to, calendar: .utc, top: top)
                        #expect(try await storage.trendFromValueRollup(source: "default", query: trend) == nil)
                        let answer = try await query.trend(source: "default", trend)
                        #expect(
                            answer == Self.expected(trend, world, valuePeople: .exactRange),
                            "\(event) per \(interval), \(top) on top")
                        if top == 20 {
                            for value in shown { #expect(answer.series.contains { $0.value == value && $0.total > 0 }) }
                        }
                    }
                }
            }
            let rollups: [(event: String, from: Int64)] = [
                ("a", Self.ms(5 * Self.day)), ("b", Self.ms(7 * Self.day)), ("open", Self.ms(Self.day)),
            ]
            for (event, from) in rollups {
                for interval in ["day", "week", "month"] {
                    let trend = try Self.trend(event, interval, from: from, to: to, calendar: .utc)
                    #expect(try await storage.trendFromValueRollup(source: "default", query: trend) != nil)
                    #expect(
                        try await query.trend(source: "default", trend)
                            == Self.expected(trend, world, valuePeople: .wholeDays),
                        "\(event) per \(interval) from the rollup")
                }
            }
        }
    }

    // MARK: Keeping the rows exact

    /// The events the value sources' rows count (all of plan's: the only property kept).
    static func valueEvents(_ storage: SQLCollectorStorage) async throws -> Int64 {
        try await storage.backend.query(
            "SELECT CAST(COALESCE(SUM(events), 0) AS BIGINT) FROM event_minutes WHERE source <> 'default'", []
        ).first?[0].int ?? -1
    }

    /// The value sources' rows count exactly the named events counted so far (each adds to one
    /// value of plan): those ingest counted (a seq above `since_seq`) and those the count of the
    /// events stored before got to (a seq up to `done`), whatever was deleted since.
    static func expectValueRowsCountTheCountedEvents(_ storage: SQLCollectorStorage, _ label: String)
        async throws
    {
        let progress = try await progress(storage)
        var counted = SQLStatement(
            storage.dialect,
            "SELECT COUNT(*) FROM events WHERE source = 'default' AND event IS NOT NULL AND (seq > ")
        counted.bind(.int(progress.since))
        counted.append(" OR seq <= ")
        counted.bind(.int(progress.done))
        counted.append(")")
        let events = try #require(try await storage.backend.query(counted).first?[0].int)
        #expect(try await valueEvents(storage) == events, "\(label): \(progress)")
    }

    /// The values' rows of each value and event add up to exactly the named events of `world`
    /// stored with that value of plan (text, or absent for missing and null), and the rows of
    /// all of them to the named events stored: each counted once, none missed.
    static func expectValueRowsHoldTheStoredEvents(_ storage: SQLCollectorStorage, _ world: World, _ label: String)
        async throws
    {
        var expected: [String: Int64] = [:]
        for message in world.stored {
            guard let name = message.name else { continue }
            var plan: JSONValue?
            if case .object(let members) = try JSONParser.parse(message.payload),
                case .object(let properties) = members["properties"]
            {
                plan = properties["plan"]
            }
            let source = ValueRollup.source(of: "default", property: "plan", value: ValueRollup.Value(plan))
            expected["\(source) \(name)", default: 0] += 1
        }
        var found: [String: Int64] = [:]
        let sums = try await storage.backend.query(
            "SELECT source, event, CAST(SUM(events) AS BIGINT) FROM event_minutes WHERE source <> 'default'"
                + " GROUP BY source, event", [])
        for row in sums {
            guard let source = row[0].text, let event = row[1].text, let count = row[2].int, count != 0 else {
                continue
            }
            found["\(source) \(event)"] = count
        }
        #expect(found == expected, "\(label)")
        let named = try #require(
            try await storage.backend.query(
                "SELECT COUNT(*) FROM events WHERE source = 'default' AND event IS NOT NULL", []
            ).first?[0].int)
        #expect(named == Int64(world.stored.filter { $0.name != nil }.count), "\(label)")
        #expect(try await valueEvents(storage) == named, "\(label)")
    }

    /// How far plan is counted: ingest counts the events above `since`, the count of the events
    /// stored before has got to `done`.
    struct Progress: Equatable, CustomStringConvertible {
        var since: Int64
        var done: Int64
        var description: String { "since \(since), done \(done)" }
    }

    /// How far plan is counted, from its row of `value_rollups`.
    static func progress(_ storage: SQLCollectorStorage) async throws -> Progress {
        let row = try #require(
            try await storage.backend.query(
                "SELECT since_seq, done FROM value_rollups WHERE source = 'default' AND property = 'plan'", []
            ).first)
        return Progress(since: try #require(row[0].int), done: try #require(row[1].int))
    }

    /// The newest event's seq.
    static func newestSeq(_ storage: SQLCollectorStorage) async throws -> Int64 {
        try #require(try await storage.backend.query("SELECT MAX(seq) FROM events", []).first?[0].int)
    }

    /// Each breakdown of a and open per day, week and month over each of `ranges` is not
    /// answered from the rollup (its count is not done), and the events' answer is the one worked
    /// out here.
    static func expectEventsAnswer(
        _ storage: SQLCollectorStorage, _ world: World, ranges: [(from: Int64, to: Int64)], _ label: String
    ) async throws {
        let query = CollectorQuery(storage: storage)
        for (offset, range) in ranges.enumerated() {
            for event in ["a", "open"] {
                for interval in ["day", "week", "month"] {
                    for exact in [true, false] {
                        let trend = try Self.trend(
                            event, interval, from: range.from, to: range.to, calendar: world.calendar, exact: exact)
                        let name = "\(label): \(event) per \(interval) over range \(offset), exact \(exact)"
                        #expect(
                            try await storage.trendFromValueRollup(source: "default", query: trend) == nil, "\(name)")
                        #expect(
                            try await query.trend(source: "default", trend)
                                == expected(trend, world, valuePeople: .exactRange), "\(name)")
                    }
                }
            }
        }
    }

    /// A user on two devices: deleting one device's data takes the user off the values only its
    /// events had on a day, and leaves them on the values the other device's events have.
    @Test(arguments: StorageKind.available)
    func deletingOneDeviceKeepsTheValuesTheOtherHas(kind: StorageKind) async throws {
        let messages = [
            Self.event("a", id: "x-pro", user: "x", anonymous: "dx", at: 2 * Self.day + 32_400, plan: "pro"),
            Self.event("a", id: "w1-pro", user: "w", anonymous: "d1", at: 2 * Self.day + 36_000, plan: "pro"),
            Self.event("a", id: "w2-team", user: "w", anonymous: "d2", at: 2 * Self.day + 39_600, plan: "team"),
            Self.event("a", id: "w1-team", user: "w", anonymous: "d1", at: 3 * Self.day + 36_000, plan: "team"),
            Self.event("a", id: "w2-team-2", user: "w", anonymous: "d2", at: 3 * Self.day + 39_600, plan: "team"),
            Self.event("a", id: "w1-alone", user: "w", anonymous: "d1", at: 4 * Self.day + 36_000, plan: "pro"),
            Self.event("open", id: "w2-open", user: "w", anonymous: "d2", at: 4 * Self.day + 39_600, plan: "pro"),
        ]
        try await withStorage(kind) { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
            try await storage.prepareValueRollup(properties: Self.kept, logger: Self.logger)
            try await BruteForce.store(messages, in: storage)
            var world = World(messages)
            let query = CollectorQuery(storage: storage)
            let trend = try Self.trend(
                "a", "day", from: Self.ms(Self.day), to: Self.ms(5 * Self.day), calendar: .utc, top: 5)
            #expect(try await storage.trendFromValueRollup(source: "default", query: trend) != nil)
            #expect(
                try await query.trend(source: "default", trend) == Self.expected(trend, world, valuePeople: .wholeDays))

            let deletion = StoredDeletion(
                id: "del_device", source: "default", body: "{}", suppressing: false,
                requestedAt: Timestamp.milliseconds(TestMessages.base))
            let deleted = try await storage.deleteUserData(deletion, userIds: [], anonymousIds: ["d1"], suppress: [])
            #expect(deleted.events == 3)
            world.stored.removeAll { $0.anonymousId == "d1" }
            try await Self.expectValueRowsCountTheCountedEvents(storage, "after deleting d1")
            let answer = try await query.trend(source: "default", trend)
            #expect(answer == Self.expected(trend, world, valuePeople: .wholeDays))
            // Day 2: pro is x's alone, team still w's; day 3: team still w's; day 4: nothing.
            let points = Self.keyed(answer)
            #expect(points["tpro"]?.map(\.count) == [0, 1, 0, 0])
            #expect(points["tpro"]?.map(\.users) == [0, 1, 0, 0])
            #expect(points["tteam"]?.map(\.count) == [0, 1, 1, 0])
            #expect(points["tteam"]?.map(\.users) == [0, 1, 1, 0])
        }
    }

    /// SQLite gives a deleted newest event's seq to the next event stored, here the seq the
    /// property was first kept from (`since_seq`): the event is counted once all the same. When
    /// the count of the events stored before has not got to that seq, the deleted event was not
    /// counted (nothing is taken off) and neither is the new one at ingest: the count takes it,
    /// and until it is done the events answer. When the count got there first (`counted first`),
    /// the deletion takes the deleted event off, and ingest counts the new one.
    @Test(arguments: StorageKind.available, [false, true])
    func anEventGivenAnOldSeqAgainIsNotMissed(kind: StorageKind, countedFirst: Bool) async throws {
        let before = [
            Self.event("a", id: "p1-1", user: "p1", anonymous: "q1", at: 1 * Self.day + 3600, plan: "pro"),
            Self.event("a", id: "p2-1", user: "p2", anonymous: "q2", at: 2 * Self.day + 3600, plan: "team"),
            Self.event("a", id: "gone-1", user: "gone", anonymous: "qg", at: 5 * Self.day + 43_200, plan: "pro"),
        ]
        let after = [
            Self.event("a", id: "again", user: "p1", anonymous: "q1", at: 7 * Self.day + 36_000, plan: "pro"),
            Self.event("a", id: "p1-8", user: "p1", anonymous: "q1", at: 8 * Self.day + 36_000, plan: "pro"),
            Self.event("a", id: "p2-9", user: "p2", anonymous: "q2", at: 9 * Self.day + 36_000, plan: "team"),
            Self.event("a", id: "p3-9", user: "p3", anonymous: "q3", at: 9 * Self.day + 39_600, plan: nil),
        ]
        try await withStorage(kind) { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
            try await BruteForce.store(before, in: storage)
            try await storage.prepareValueRollup(properties: Self.kept, logger: Self.logger, build: false)
            let since = try await Self.newestSeq(storage)
            let gone = try #require(
                try await storage.backend.query("SELECT seq FROM events WHERE message_id = 'gone-1'", []).first?[0].int)
            #expect(gone == since)
            if countedFirst {
                #expect(try await !ValueRollup.runBatch(storage.backend, calendars: storage.calendars, limit: 40))
                #expect(try await Self.valueEvents(storage) == 3)
            }
            let deletion = StoredDeletion(
                id: "del_gone", source: "default", body: "{}", suppressing: false,
                requestedAt: Timestamp.milliseconds(TestMessages.base))
            #expect(
                try await storage.deleteUserData(deletion, userIds: ["gone"], anonymousIds: [], suppress: []).events
                    == 1)
            // Counted, it is taken off; not counted, nothing is.
            #expect(try await Self.valueEvents(storage) == (countedFirst ? 2 : 0))
            for message in after { #expect(try await storage.insert([message], source: "default") == [true]) }
            let seq = try #require(
                try await storage.backend.query("SELECT seq FROM events WHERE message_id = 'again'", []).first?[0].int)
            if kind == .sqlite { #expect(seq == since, "SQLite gave seq \(seq) again (kept from \(since))") }
            try await Self.expectValueRowsCountTheCountedEvents(storage, "after an old seq")
            // Ingest counts "again" when its seq is above since_seq, or the count got to it.
            let atIngest: Int64 = seq > since || countedFirst ? 4 : 3
            #expect(try await Self.valueEvents(storage) == (countedFirst ? 2 : 0) + atIngest)
            let world = World(before.filter { $0.userId != "gone" } + after)
            let query = CollectorQuery(storage: storage)
            func expectAnswers(fromTheRollup: Bool, _ label: String) async throws {
                for from in [0, 6, 8] {
                    for interval in ["day", "week", "month"] {
                        let trend = try Self.trend(
                            "a", interval, from: Self.ms(Double(from) * Self.day), to: Self.ms(10 * Self.day),
                            calendar: .utc, top: 5)
                        let name = "\(label): a per \(interval) from day \(from)"
                        let rows = try await storage.trendFromValueRollup(source: "default", query: trend)
                        #expect((rows != nil) == fromTheRollup, "\(name)")
                        // Whole days: the events' people and the rollup's are the same.
                        let answer = try await query.trend(source: "default", trend)
                        #expect(answer == Self.expected(trend, world, valuePeople: .wholeDays), "\(name)")
                        guard from == 6, interval == "day" else { continue }
                        // "again" once, on day 7.
                        #expect(Self.keyed(answer)["tpro"]?.map(\.count) == [0, 1, 1, 0], "\(name)")
                    }
                }
            }
            try await expectAnswers(fromTheRollup: countedFirst, "before the count")
            if !countedFirst {
                // The count takes seqs 1 to since in one batch, "again" among them.
                #expect(try await !ValueRollup.runBatch(storage.backend, calendars: storage.calendars, limit: 40))
            }
            #expect(try await Self.progress(storage) == Self.Progress(since: since, done: since))
            try await Self.expectValueRowsHoldTheStoredEvents(storage, world, "counted")
            try await expectAnswers(fromTheRollup: true, "counted")
        }
    }

    /// Another time zone counts the property again (its rows are of local days): its rows go,
    /// ingest counts the events stored since, and the events stored before are counted again in
    /// the background; until that is done the events answer, and once it is every range, before
    /// the change and after, is answered from the rollup in the new zone, exactly. A property no
    /// longer kept loses its rows and is read from the events.
    @Test(arguments: StorageKind.available)
    func aNewTimeZoneCountsTheRollupAgainAndADroppedPropertyLosesIt(kind: StorageKind) async throws {
        let tokyo = try #require(SourceCalendar(identifier: "Asia/Tokyo"))
        let first = Self.traffic(seed: 100)
        let second = Self.traffic(seed: 101, start: 12 * Self.day)
        try await withStorage(kind) { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
            try await storage.prepareValueRollup(properties: Self.kept, logger: Self.logger, build: false)
            // Kept from the first event: nothing to count before it.
            #expect(try await Self.progress(storage) == Self.Progress(since: 0, done: 0))
            try await BruteForce.store(first, in: storage)
            #expect(try await Self.valueEvents(storage) == Int64(first.filter { $0.name != nil }.count))

            try await storage.prepareDailyPeople(calendars: ["default": tokyo], logger: Self.logger, build: false)
            try await storage.prepareValueRollup(properties: Self.kept, logger: Self.logger, build: false)
            #expect(try await Self.valueEvents(storage) == 0)
            let zones = try await storage.backend.query("SELECT time_zone FROM value_rollups", [])
            #expect(zones.map { $0[0].text } == ["Asia/Tokyo"])
            let since = try await Self.newestSeq(storage)
            #expect(try await Self.progress(storage) == Self.Progress(since: since, done: 0))
            try await BruteForce.store(second, in: storage)
            #expect(try await Self.valueEvents(storage) == Int64(second.filter { $0.name != nil }.count))
            try await Self.expectValueRowsCountTheCountedEvents(storage, "in Tokyo, before the count")

            let world = World(first + second, calendar: tokyo)
            let query = CollectorQuery(storage: storage)
            let firstDay = tokyo.day(of: Self.ms(0))
            let earlier = (from: tokyo.start(ofDay: firstDay + 2), to: tokyo.start(ofDay: firstDay + 9))
            let later = (from: tokyo.start(ofDay: firstDay + 12), to: tokyo.start(ofDay: firstDay + 21))
            let across = (from: tokyo.start(ofDay: firstDay + 1), to: tokyo.start(ofDay: firstDay + 20) + 4_321_000)
            for range in [earlier, later, across] {
                for interval in ["day", "week", "month"] {
                    let trend = try Self.trend("open", interval, from: range.from, to: range.to, calendar: tokyo)
                    #expect(try await storage.trendFromValueRollup(source: "default", query: trend) == nil)
                }
            }

            // The daily people in Tokyo, then the count of the events stored before.
            storage.backfill.start()
            await storage.backfill.finish()
            #expect(try await Self.progress(storage) == Self.Progress(since: since, done: since))
            try await Self.expectValueRowsHoldTheStoredEvents(storage, world, "in Tokyo")
            try await Self.expectRollupAnswers(storage, world, ranges: [earlier, later, across], "in Tokyo")
            let trend = try Self.trend("open", "day", from: earlier.from, to: earlier.to, calendar: tokyo)
            try await Self.expectTamperingShows(storage, trend, earliest: earlier.from)

            // Dropped: its rows and its state go; the events answer.
            try await storage.prepareValueRollup(properties: [:], logger: Self.logger, build: false)
            #expect(try await storage.backend.query("SELECT source FROM value_rollups", []).isEmpty)
            for table in ["event_minutes", "daily_people"] {
                let rows = try await storage.backend.query(
                    "SELECT COUNT(*) FROM \(table) WHERE source <> 'default'", []
                ).first?[0].int
                #expect(rows == 0, "\(table)")
            }
            let new = try Self.trend("open", "day", from: later.from, to: later.to, calendar: tokyo)
            #expect(try await storage.trendFromValueRollup(source: "default", query: new) == nil)
            #expect(try await query.trend(source: "default", new) == Self.expected(new, world, valuePeople: .wholeDays))
        }
    }

    /// PostgreSQL whose databases sort text by language (ICU's en-US, as many servers are set
    /// up), where U+001F is not below the space: the value sources are found all the same.
    @Test(.enabled(if: PostgresTestEnvironment.enabled))
    func aDatabaseThatSortsTextByLanguageFindsTheValues() async throws {
        let adminURL = try #require(PostgresTestEnvironment.url)
        let name = "touchpoint_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        let admin = try await PostgresBackend.open(
            url: adminURL, maximumConnections: 1, logger: PostgresTestEnvironment.logger)
        do {
            _ = try await admin.query(
                "CREATE DATABASE \(name) TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu"
                    + " ICU_LOCALE 'en-US'", [])
            try await admin.close()
        } catch {
            try? await admin.close()
            throw error
        }
        var components = try #require(URLComponents(string: adminURL))
        components.path = "/" + name
        let messages = Self.traffic(seed: 110)
        do {
            let storage = try await SQLCollectorStorage.postgres(
                url: try #require(components.string), maximumConnections: 4, logger: PostgresTestEnvironment.logger)
            do {
                try await storage.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
                try await storage.prepareValueRollup(properties: Self.kept, logger: Self.logger)
                try await BruteForce.store(messages, in: storage)
                let world = World(messages)
                let query = CollectorQuery(storage: storage)
                for interval in ["day", "week", "month"] {
                    let trend = try Self.trend(
                        "a", interval, from: Self.ms(Self.day), to: Self.ms(9 * Self.day), calendar: .utc)
                    let rows = try await storage.trendFromValueRollup(source: "default", query: trend)
                    #expect(rows?.isEmpty == false, "rows from the rollup: \(String(describing: rows))")
                    let answer = try await query.trend(source: "default", trend)
                    #expect(answer.series.count == 4, "\(answer.series.map { ($0.value, $0.isOther, $0.total) })")
                    #expect(
                        answer == Self.expected(trend, world, valuePeople: .wholeDays),
                        "a per \(interval) in a database that sorts by language")
                }
                // Dropped, its rows go too.
                try await storage.prepareValueRollup(properties: [:], logger: Self.logger)
                let left = try await storage.backend.query(
                    "SELECT COUNT(*) FROM event_minutes WHERE source <> 'default'", []
                ).first?[0].int
                #expect(left == 0, "value rows left after plan is dropped")
                try await storage.close()
            } catch {
                try? await storage.close()
                throw error
            }
        } catch {
            await PostgresTestEnvironment.drop(name)
            throw error
        }
        await PostgresTestEnvironment.drop(name)
    }

    // MARK: Configuration

    /// A kept property that is not a property name stops the start, naming the option (or the
    /// source) and the name; good names start, and are what the database keeps.
    @Test(arguments: [
        ("default", "bad-name", "--rollup-properties: \"bad-name\""),
        ("web", "1st", "the rollup properties of source \"web\": \"1st\""),
    ])
    func aBadPropertyNameStopsTheStart(source: String, property: String, message: String) async throws {
        let directory = try TemporaryDirectory(prefix: "collector-rollup")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url)
        configuration.logger.logLevel = .warning
        configuration.rollupProperties = ["plan", "country"]
        try await CollectorServer(configuration: configuration).start().shutdown()
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending(CollectorConfiguration.sqliteFileName).path, logger: Self.logger)
        let kept = try await storage.backend.query(
            "SELECT property FROM value_rollups WHERE source = 'default' ORDER BY property", [])
        try await storage.close()
        #expect(kept.map { $0[0].text } == ["country", "plan"])

        if source == "default" {
            configuration.rollupProperties = ["plan", property]
        } else {
            configuration.additionalSources = [
                CollectorSource(id: source, writeKey: "web-key-0123456789", rollupProperties: ["plan", property])
            ]
        }
        await #expect {
            _ = try await CollectorServer(configuration: configuration).start()
        } throws: { error in
            guard let error = error as? CollectorError else { return false }
            return error.code == .invalidConfiguration && error.message.contains(message)
        }
    }

    /// `touchpoint serve --rollup-properties` takes a comma-separated list, and refuses a bad name
    /// by the option's name.
    @Test func theServeOptionNamesTheProperties() async throws {
        let directory = try TemporaryDirectory(prefix: "serve-rollup")
        let credentials = ["--write-key", "wk-rollup-0123456789", "--admin-token", "at-rollup-0123456789"]
        await #expect {
            _ = try await CollectorProcess.start(
                ["--data", directory.path, "--rollup-properties", "plan,bad-name"] + credentials)
        } throws: { error in
            "\(error)".contains("--rollup-properties") && "\(error)".contains("bad-name")
        }
        let collector = try await CollectorProcess.start(
            ["--data", directory.path, "--rollup-properties", " plan, country ,"] + credentials)
        #expect(try await collector.terminate() == 0)
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending(CollectorConfiguration.sqliteFileName).path, logger: Self.logger)
        let kept = try await storage.backend.query(
            "SELECT property FROM value_rollups WHERE source = 'default' ORDER BY property", [])
        try await storage.close()
        #expect(kept.map { $0[0].text } == ["country", "plan"])
    }
}
