import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Every insight over generated traffic with merges, against the same answer worked out here
/// from the messages themselves: on both databases; as stored at ingest and after the upgrades
/// that number people (schema 12) and count them by day (schema 20, built in the background); in
/// UTC and in a time zone whose clocks change within the range; with events that arrive late, a
/// user's data deleted, a retention cut, and a change of time zone.
struct AnalyticsBruteForceTests {
    static let day: TimeInterval = 86_400

    /// Visitors browsing anonymously, half of them signing in (an identify with both ids), some
    /// aliased (one before its anonymous id sends anything), one merged twice (the first wins),
    /// one user id that is also another visitor's anonymous id; events a, b, c, open and signup
    /// with a `plan` that is text, a boolean, a number or absent, each at its own second over
    /// ten days from `start` (seconds after `TestMessages.base`), plus `shift`, so that two runs'
    /// times differ; in time order.
    static func traffic(seed: UInt64, shift: TimeInterval = 0, start: TimeInterval = 0) -> [IngestMessage] {
        var random = SeededRandomNumberGenerator(seed: seed)
        var timed: [(TimeInterval, IngestMessage)] = []
        var used = Set<Int>()
        func second(after start: Int = 0, before limit: Int = 10 * 86_400) -> Int {
            while true {
                let candidate = start + Int(random.next() % UInt64(limit - start))
                if used.insert(candidate).inserted { return candidate }
            }
        }
        let plans: [JSONValue?] = ["free", "free", "pro", "pro", "team", true, 3, nil]
        func event(_ name: String, user: String?, anonymous: String?, at offset: Int) {
            let plan = plans[Int(random.next() % UInt64(plans.count))]
            let message = TestMessages.ingest(
                name, id: "m\(timed.count)-\(seed)", session: "s-\(anonymous ?? user ?? "")", user: user,
                anonymous: anonymous, at: start + TimeInterval(offset) + shift,
                properties: plan.map { ["plan": $0] } ?? [:])
            timed.append((TimeInterval(offset), message))
        }
        func call(_ type: MessageType, user: String, anonymous: String? = nil, previous: String? = nil, at offset: Int)
        {
            timed.append(
                (
                    TimeInterval(offset),
                    AnalyticsTests.call(
                        type, id: "c\(timed.count)-\(seed)", user: user, anonymous: anonymous, previous: previous,
                        at: start + TimeInterval(offset) + shift)
                ))
        }
        let names = ["a", "b", "c", "open", "open", "signup"]
        for visitor in 0..<24 {
            let anonymous = "v\(visitor)"
            let signIn = visitor % 2 == 0 ? second() : nil
            for _ in 0..<(4 + Int(random.next() % 12)) {
                let time = second()
                let signedIn = signIn.map { time > $0 } ?? false
                event(
                    names[Int(random.next() % UInt64(names.count))], user: signedIn ? "u\(visitor)" : nil,
                    anonymous: anonymous, at: time)
            }
            if let signIn { call(.identify, user: "u\(visitor)", anonymous: anonymous, at: signIn) }
        }
        // v1 is aliased to u1 (and its later events carry u1), v3 twice (to u3, then to u99:
        // ignored); "late" is aliased before it sends anything; a user is called "v5".
        call(.alias, user: "u1", previous: "v1", at: second())
        let firstMerge = second(before: 5 * 86_400)
        call(.alias, user: "u3", previous: "v3", at: firstMerge)
        call(.identify, user: "u99", anonymous: "v3", at: firstMerge + 5 * 86_400)
        call(.alias, user: "u-late", previous: "late", at: second(before: 600))
        for _ in 0..<6 { event(names[Int(random.next() % 5)], user: nil, anonymous: "late", at: second(after: 600)) }
        for _ in 0..<5 { event(names[Int(random.next() % 5)], user: "v5", anonymous: nil, at: second()) }
        return timed.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// What was sent and what is stored: people are merged by every identify and alias sent (the
    /// collector keeps its merges when retention deletes the calls), counted over what is stored.
    struct World {
        var sent: [IngestMessage]
        var stored: [IngestMessage]
        var calendar: SourceCalendar

        init(_ messages: [IngestMessage], calendar: SourceCalendar = .utc) {
            sent = messages
            stored = messages
            self.calendar = calendar
        }

        /// Each stored message's person as the analytics define it (user id, else the user its
        /// anonymous id was first merged into, else the anonymous id), as a number: only equality
        /// matters.
        var people: [Int64?] {
            var merges: [String: String] = [:]
            for message in sent {
                guard let user = message.userId else { continue }
                let anonymous: String?
                switch message.type {
                case .identify: anonymous = message.anonymousId
                case .alias:
                    guard case .object(let members) = try? JSONParser.parse(message.payload) else { continue }
                    anonymous = members["previousId"]?.stringValue ?? message.anonymousId
                default: continue
                }
                if let anonymous, anonymous != user, merges[anonymous] == nil { merges[anonymous] = user }
            }
            var numbers: [String: Int64] = [:]
            return stored.map { message in
                guard let person = message.userId ?? message.anonymousId.map({ merges[$0] ?? $0 }) else { return nil }
                if let number = numbers[person] { return number }
                numbers[person] = Int64(numbers.count)
                return numbers[person]
            }
        }

        /// The people who did `event` on each local day.
        func daily(_ event: String) -> [Int64: Set<Int64>] {
            var days: [Int64: Set<Int64>] = [:]
            for (message, person) in zip(stored, people) where message.name == event {
                guard let person else { continue }
                days[calendar.day(of: message.timestamp), default: []].insert(person)
            }
            return days
        }

        /// The people who did `event` on any of `days`.
        func people(_ event: String, on days: ClosedRange<Int64>) -> Set<Int64> {
            daily(event).filter { days.contains($0.key) }.values.reduce(into: Set()) { $0.formUnion($1) }
        }
    }

    /// `plan` as the breakdown reads it: text as it is, booleans and numbers as their JSON.
    static func plan(of message: IngestMessage) -> String? {
        guard case .object(let members) = try? JSONParser.parse(message.payload),
            case .object(let properties) = members["properties"]
        else { return nil }
        switch properties["plan"] {
        case .string(let text): return text
        case .bool(let flag): return flag ? "true" : "false"
        case .int(let number): return String(number)
        default: return nil
        }
    }

    static func expectedTrend(_ query: TrendQuery, _ world: World) -> TrendResult {
        let calendar = query.range.calendar
        var totals: [Int64: (count: Int, people: Set<Int64>)] = [:]
        var byValue: [String?: [Int64: (count: Int, people: Set<Int64>)]] = [:]
        var valueCounts: [String: Int] = [:]
        for (message, person) in zip(world.stored, world.people)
        where message.name == query.event && message.timestamp >= query.range.from
            && message.timestamp < query.range.to
        {
            let index = calendar.index(of: message.timestamp, query.interval)
            let value = plan(of: message)
            totals[index, default: (0, [])].count += 1
            byValue[value, default: [:]][index, default: (0, [])].count += 1
            if let person {
                totals[index]?.people.insert(person)
                byValue[value]?[index]?.people.insert(person)
            }
            if let value { valueCounts[value, default: 0] += 1 }
        }
        let top = Set(
            valueCounts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.prefix(query.topValues).map(\.key))
        var rows: [TrendRow] = []
        var other: [Int64: (count: Int, people: Set<Int64>)] = [:]
        for (value, points) in byValue where query.breakdown != nil {
            for (index, point) in points {
                if let value, !top.contains(value) {
                    other[index, default: (0, [])].count += point.count
                    other[index]?.people.formUnion(point.people)
                } else {
                    rows.append(
                        TrendRow(
                            index: index, value: value, isOther: false, count: point.count, users: point.people.count))
                }
            }
        }
        for (index, point) in other {
            rows.append(
                TrendRow(index: index, value: nil, isOther: true, count: point.count, users: point.people.count))
        }
        var result = TrendResult.assemble(
            query, totals: totals.mapValues { TrendCount(count: $0.count, users: $0.people.count) }, rows: rows)
        if let math = query.math {
            for (offset, entry) in query.range.dayRanges(query.interval).enumerated() {
                let end = entry.days.upperBound
                result.totals[offset].active = world.people(query.event, on: (end - math.days + 1)...end).count
            }
        }
        return result
    }

    static func expectedFunnel(_ query: FunnelQuery, _ world: World) -> FunnelResult {
        let names = Set(query.steps.map(\.event))
        let rows = zip(world.stored, world.people).compactMap { message, person -> FunnelRow? in
            guard let person, let name = message.name, names.contains(name),
                message.timestamp >= query.range.from, message.timestamp < query.range.to + query.window,
                case .object(let members)? = try? JSONParser.parse(message.payload)
            else { return nil }
            let steps = query.matches(event: name, properties: members["properties"]?.objectValue ?? [:])
            return steps == 0 ? nil : FunnelRow(person: person, timestamp: message.timestamp, steps: steps, value: nil)
        }
        return FunnelResult.compute(query, rows: rows)
    }

    static func expectedRetention(_ query: RetentionQuery, _ world: World, now: Date) -> RetentionResult {
        let calendar = query.range.calendar
        let interval = query.interval
        let intervals = query.range.intervals(interval)
        var cohortOf: [Int64: Int64] = [:]
        for (day, people) in world.daily(query.startEvent).sorted(by: { $0.key < $1.key }) {
            let index = calendar.index(ofDay: day, interval)
            guard intervals.contains(index) else { continue }
            for person in people where cohortOf[person] == nil { cohortOf[person] = index }
        }
        var returned = Set<[Int64]>()
        for (day, people) in world.daily(query.returnEvent) {
            for person in people { returned.insert([person, calendar.index(ofDay: day, interval)]) }
        }
        let nowIndex = calendar.index(of: Timestamp.milliseconds(now), interval)
        let cohorts = intervals.map { index -> RetentionCohort in
            let members = cohortOf.filter { $0.value == index }.map(\.key)
            let visible = max(0, min(query.periods, Int(nowIndex - index))) + 1
            return RetentionCohort(
                start: Timestamp.date(milliseconds: calendar.start(of: index, interval)), size: members.count,
                returned: (0..<visible).map { period in
                    members.filter { returned.contains([$0, index + Int64(period)]) }.count
                })
        }
        return RetentionResult(query: query, cohorts: cohorts)
    }

    static func expectedStickiness(_ query: StickinessQuery, _ world: World) -> StickinessResult {
        let calendar = query.range.calendar
        let daily = world.daily(query.event)
        let intervals = query.range.intervals(query.interval).map { index -> StickinessResult.Interval in
            let first = calendar.firstDay(of: index, query.interval)
            let length = Int(calendar.firstDay(of: index + 1, query.interval) - first)
            var days: [Int64: Int] = [:]
            for day in first..<(first + Int64(length)) {
                for person in daily[day] ?? [] { days[person, default: 0] += 1 }
            }
            var people = Array(repeating: 0, count: length)
            for count in days.values { people[count - 1] += 1 }
            return StickinessResult.Interval(
                start: Timestamp.date(milliseconds: calendar.start(of: index, query.interval)), people: people)
        }
        return StickinessResult(query: query, intervals: intervals, partial: false)
    }

    static func expectedLifecycle(_ query: LifecycleQuery, _ world: World) -> LifecycleResult {
        let calendar = query.range.calendar
        let daily = world.daily(query.event)
        func active(_ index: Int64) -> Set<Int64> {
            daily.filter { calendar.index(ofDay: $0.key, query.interval) == index }.values.reduce(into: Set()) {
                $0.formUnion($1)
            }
        }
        func ever(before index: Int64) -> Set<Int64> {
            daily.filter { calendar.index(ofDay: $0.key, query.interval) < index }.values.reduce(into: Set()) {
                $0.formUnion($1)
            }
        }
        let intervals = query.range.intervals(query.interval).map { index -> LifecycleResult.Interval in
            let now = active(index)
            let previous = active(index - 1)
            let before = ever(before: index)
            return LifecycleResult.Interval(
                start: Timestamp.date(milliseconds: calendar.start(of: index, query.interval)),
                new: now.subtracting(before).count, returning: now.intersection(previous).count,
                resurrecting: now.subtracting(previous).intersection(before).count,
                dormant: previous.subtracting(now).count)
        }
        return LifecycleResult(query: query, intervals: intervals, partial: false)
    }

    /// Asks each question of the storage and compares it with the answer worked out here, the
    /// range from an hour after `start` to ten days after it less an hour.
    static func expectAnswers(_ storage: SQLCollectorStorage, _ world: World, start: TimeInterval = 0) async throws {
        let query = CollectorQuery(storage: storage)
        let now = TestMessages.base.addingTimeInterval(start + 11 * day)
        func parameters(_ values: [String: String]) -> AnalyticsParameters {
            AnalyticsParameters(now: now, calendar: world.calendar) { values[$0] }
        }
        let from = Timestamp.format(TestMessages.base.addingTimeInterval(start + 3600))
        let to = Timestamp.format(TestMessages.base.addingTimeInterval(start + 10 * day - 3600))
        let zone = world.calendar.identifier
        for (event, interval) in [("a", "day"), ("open", "hour"), ("signup", "week")] {
            var trend = try parameters(
                ["event": event, "interval": interval, "breakdown": "plan", "from": from, "to": to]
            ).trend()
            trend.topValues = 2
            let answer = try await query.trend(source: "default", trend)
            #expect(answer == expectedTrend(trend, world), "trend of \(event) per \(interval) in \(zone)")
            #expect(answer.totals.contains { $0.users > 0 })
            trend.breakdown = nil
            #expect(try await query.trend(source: "default", trend) == expectedTrend(trend, world))
        }
        for math in ["dau", "wau", "mau"] {
            let trend = try parameters(["event": "open", "interval": "day", "math": math, "from": from, "to": to])
                .trend()
            let answer = try await query.trend(source: "default", trend)
            #expect(answer == expectedTrend(trend, world), "\(math) of open in \(zone)")
            #expect(answer.totals.contains { ($0.active ?? 0) > 0 })
        }
        for steps in ["a,b,c", "open,a[plan=pro],b"] {
            let funnel = try parameters(["steps": steps, "window": "2d", "from": from, "to": to]).funnel()
            let answer = try await query.funnel(source: "default", funnel)
            #expect(answer == expectedFunnel(funnel, world), "funnel \(steps) in \(zone)")
            #expect(answer.steps[0].users > 0)
        }
        for (start, returning) in [("signup", "open"), ("open", "open")] {
            for interval in ["day", "week", "month"] {
                let retention = try parameters(
                    ["start": start, "return": returning, "interval": interval, "periods": "8", "from": from, "to": to]
                ).retention()
                let answer = try await query.retention(source: "default", retention, now: now)
                #expect(
                    answer == expectedRetention(retention, world, now: now),
                    "retention of \(start) then \(returning) per \(interval) in \(zone)")
                #expect(answer.cohorts.contains { $0.size > 0 })
            }
        }
        for interval in ["week", "month"] {
            let stickiness = try parameters(["event": "open", "interval": interval, "from": from, "to": to])
                .stickiness()
            let answer = try await query.stickiness(source: "default", stickiness)
            #expect(answer == expectedStickiness(stickiness, world), "stickiness per \(interval) in \(zone)")
            #expect(answer.intervals.contains { $0.people.contains { $0 > 0 } })
        }
        for interval in ["day", "week", "month"] {
            let lifecycle = try parameters(["event": "a", "interval": interval, "from": from, "to": to]).lifecycle()
            let answer = try await query.lifecycle(source: "default", lifecycle)
            #expect(answer == expectedLifecycle(lifecycle, world), "lifecycle per \(interval) in \(zone)")
            #expect(answer.intervals.contains { $0.new > 0 })
        }
        for values in [["start": "open", "window": "2d"], ["end": "b", "steps": "2"]] {
            let paths = try parameters(values.merging(["from": from, "to": to]) { $1 }).paths()
            let answer = try await query.paths(source: "default", paths)
            let ordered = world.stored.indices.sorted { world.stored[$0].timestamp < world.stored[$1].timestamp }
            let people = world.people
            let expected = InsightsBruteForceTests.paths(
                paths, ordered.map { world.stored[$0] }, people: ordered.map { people[$0] })
            #expect(answer == PathResult.build(answer.query, paths: expected), "paths \(values) in \(zone)")
            #expect(answer.root.people > 0)
        }
    }

    /// Stores `messages` in batches of 17, so that merges arrive in other writes than the events
    /// they merge.
    static func store(_ messages: [IngestMessage], in storage: SQLCollectorStorage) async throws {
        for start in stride(from: 0, to: messages.count, by: 17) {
            let batch = Array(messages[start..<min(start + 17, messages.count)])
            #expect(try await storage.insert(batch, source: "default").allSatisfy { $0 })
        }
    }

    static let logger = Logger(label: "touchpoint.tests.analytics")

    @Test(arguments: StorageKind.insightStores)
    func answersEqualTheOnesWorkedOutFromTheMessages(kind: StorageKind) async throws {
        let messages = Self.traffic(seed: 20)
        let more = Self.traffic(seed: 21, shift: 0.5)
        try await withStorage(kind) { storage async throws in
            try await Self.store(messages, in: storage)
            try await Self.expectAnswers(storage, World(messages))
        }
        // The same messages as schema 7 stored them, upgraded: schema 8 merges their identities,
        // schema 12 numbers their people, schema 20 counts them by day in the background.
        // (ClickHouse gets events from ingest only: a store upgraded to it starts with none there.)
        guard kind != .clickhouse else { return }
        try await OlderSchemas.upgrade(kind, from: 7) { backend async throws in
            try await OlderSchemas.store(messages, source: "default", in: backend)
        } opened: { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
            #expect(try await storage.dailyPeopleBuilding(source: "default"))
            storage.backfill.start()
            await storage.backfill.finish()
            #expect(try await !storage.dailyPeopleBuilding(source: "default"))
            try await Self.expectAnswers(storage, World(messages))
            // And traffic after the upgrade counts its people with the ones before.
            #expect(try await storage.insert(more, source: "default").allSatisfy { $0 })
            try await Self.expectAnswers(storage, World(messages + more))
        }
    }

    /// Ten days over the change to summer time in Berlin (2026-03-29, a day of 23 hours), with a
    /// tenth of the events arriving after the rest.
    @Test(arguments: StorageKind.insightStores)
    func theAnswersHoldInAZoneWithLateEventsADeletionAndARetentionCut(kind: StorageKind) async throws {
        let berlin = try #require(SourceCalendar(identifier: "Europe/Berlin"))
        let start = 82 * Self.day  // 2026-03-24
        let messages = Self.traffic(seed: 30, start: start)
        // Events (not calls, whose order decides which merge wins) late, in reverse.
        var late: [IngestMessage] = []
        var onTime: [IngestMessage] = []
        for (offset, message) in messages.enumerated() {
            if message.name != nil, offset % 10 == 3 { late.insert(message, at: 0) } else { onTime.append(message) }
        }
        try await withStorage(kind) { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": berlin], logger: Self.logger)
            try await Self.store(onTime + late, in: storage)
            var world = World(messages, calendar: berlin)
            try await Self.expectAnswers(storage, world, start: start)

            // u4 and v4 deleted: their events leave every insight.
            let deletion = StoredDeletion(
                id: "del_test", source: "default", body: "{}", suppressing: false,
                requestedAt: Timestamp.milliseconds(TestMessages.base))
            let deleted = try await storage.deleteUserData(
                deletion, userIds: ["u4"], anonymousIds: ["v4"], suppress: [])
            world.stored.removeAll { $0.userId == "u4" || $0.anonymousId == "v4" }
            #expect(deleted.events == messages.count - world.stored.count)
            #expect(deleted.events > 0)
            try await Self.expectAnswers(storage, world, start: start)

            // Retention of 6 days on the day after the range: whole local days go, with their people.
            let sources = [
                CollectorSource(id: "default", writeKey: "wk", retentionDays: 6, timeZone: berlin.identifier)
            ]
            let now = TestMessages.base.addingTimeInterval(start + 11 * Self.day)
            let retention = RetentionService(
                storage: storage, sources: sources, defaultDays: nil, clock: ManualClock(start: now),
                logger: Self.logger,
                batchSize: 7)
            let report = try await retention.runPass()
            let cutoff = berlin.start(ofDay: berlin.day(of: Timestamp.milliseconds(now) - 6 * 86_400_000))
            #expect(Timestamp.format(Timestamp.date(milliseconds: cutoff)) == "2026-03-28T23:00:00.000Z")
            let before = world.stored.count
            world.stored.removeAll { $0.timestamp < cutoff }
            #expect(report.events == before - world.stored.count)
            #expect(report.events > 0)
            try await Self.expectAnswers(storage, world, start: start)
        }
    }

    /// A source's time zone changes: its daily people are built again from the stored events, and
    /// the insights say they are partial until then.
    @Test(arguments: StorageKind.available)
    func aNewTimeZoneBuildsTheDailyPeopleAgain(kind: StorageKind) async throws {
        let tokyo = try #require(SourceCalendar(identifier: "Asia/Tokyo"))
        let messages = Self.traffic(seed: 40)
        try await withStorage(kind) { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger)
            try await Self.store(messages, in: storage)
            try await Self.expectAnswers(storage, World(messages))
            try await storage.prepareDailyPeople(calendars: ["default": tokyo], logger: Self.logger, build: false)
            let query = CollectorQuery(storage: storage)
            let retention = try AnalyticsParameters(now: TestMessages.base, calendar: tokyo) {
                ["start": "open", "from": Timestamp.format(TestMessages.base), "to": Self.tenDays][$0]
            }.retention()
            #expect(try await query.retention(source: "default", retention, now: TestMessages.base).partial)
            storage.backfill.start()
            await storage.backfill.finish()
            #expect(try await !query.retention(source: "default", retention, now: TestMessages.base).partial)
            try await Self.expectAnswers(storage, World(messages, calendar: tokyo))
        }
    }

    /// A resent message id stores nothing, whatever it carries now (another name, day or person):
    /// it adds no one to any day, on either store.
    @Test(arguments: StorageKind.insightStores)
    func aResentMessageAddsNoOne(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            try await storage.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger)
            let first = TestMessages.ingest("open", id: "m1", user: "u1", anonymous: "a1")
            #expect(try await storage.insert([first], source: "default") == [true])
            let resent = [
                TestMessages.ingest("forged", id: "m1", user: "intruder", anonymous: "a9", at: 86_400),
                TestMessages.ingest("open", id: "m1", user: "intruder", anonymous: "a9"),
            ]
            for message in resent { #expect(try await storage.insert([message], source: "default") == [false]) }
            let day = SourceCalendar.utc.day(of: Timestamp.milliseconds(TestMessages.base))
            let forged = try await storage.dailyPeople(source: "default", event: "forged", days: day...(day + 1))
            #expect(forged.people.union(day...(day + 1)).isEmpty)
            let opened = try await storage.dailyPeople(source: "default", event: "open", days: day...day)
            #expect(opened.people.union(day...day).count == 1)
        }
    }

    static let tenDays = Timestamp.format(TestMessages.base.addingTimeInterval(10 * day))

    /// A build stopped part-way (the collector killed) resumes from where its last slice ended:
    /// what it wrote before is not read again, and the answers come out whole.
    @Test(arguments: StorageKind.available)
    func aBuildStoppedPartWayResumesWhereItWas(kind: StorageKind) async throws {
        let messages = Self.traffic(seed: 50)
        try await TestDatabase.with(kind) { database in
            let first = try await database.storage()
            try await Self.store(messages, in: first)
            try await first.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
            // Two slices of 40 events, then the collector is gone without closing.
            #expect(try await first.backfill.run(slices: 2, size: 40) == 2)
            let cursor = try await first.backend.query(
                "SELECT built_event, built_seq FROM daily_people_state WHERE source = 'default'", [])
            #expect(cursor.first?.first?.text != nil)
            // Each slice commits its bits with its cursor: stopping here is a kill after the second.
            try await first.close()

            let second = try await database.storage()
            do {
                try await second.prepareDailyPeople(calendars: ["default": .utc], logger: Self.logger, build: false)
                #expect(try await second.dailyPeopleBuilding(source: "default"))
                let events = messages.filter { $0.name != nil }.count
                let slices = try await second.backfill.run(slices: 1000, size: 40)
                // The first two slices' events are not read again.
                #expect(slices == (events - 80) / 40 + 1)
                #expect(try await !second.dailyPeopleBuilding(source: "default"))
                try await Self.expectAnswers(second, World(messages))
                try await second.close()
            } catch {
                try? await second.close()
                throw error
            }
        }
    }
}
