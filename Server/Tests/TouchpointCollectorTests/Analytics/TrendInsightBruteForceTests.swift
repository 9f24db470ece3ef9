import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Trends of several series (filters on events and on people's traits, sums, averages,
/// medians and 90th percentiles, a formula, the period before, date presets) against the same
/// answer worked out here from the messages themselves, on both databases.
struct TrendInsightBruteForceTests {
    static let day: TimeInterval = 86_400

    /// People signed in (`u0` … `u11`, their `plan` trait set by one or two identify calls, the
    /// last one winning, or never) and anonymous visitors (`a0` … `a3`) doing `buy` (with an
    /// `amount` that is an integer, a fraction, a text or absent, and a `plan` that is text, a
    /// boolean, a number or absent) and `view`, each at its own second over 20 days; in time order.
    static func traffic(seed: UInt64) -> [IngestMessage] {
        var random = SeededRandomNumberGenerator(seed: seed)
        var timed: [(TimeInterval, IngestMessage)] = []
        var used = Set<Int>()
        func second() -> Int {
            while true {
                let candidate = Int(random.next() % UInt64(20 * 86_400))
                if used.insert(candidate).inserted { return candidate }
            }
        }
        let amounts: [JSONValue?] = [1, 7, 20, 35, 60, 99, 12.5, 0.25, "12", nil]
        let plans: [JSONValue?] = ["free", "pro", "team", true, 3, nil]
        let traits: [JSONValue] = ["free", "pro", "team"]
        var count = 0
        for person in 0..<16 {
            let user = person < 12 ? "u\(person)" : nil
            let anonymous = person < 12 ? nil : "a\(person - 12)"
            if let user, person % 4 != 3 {
                for _ in 0..<(1 + person % 2) {
                    count += 1
                    let time = second()
                    timed.append(
                        (
                            TimeInterval(time),
                            AnalyticsTests.call(
                                .identify, id: "i\(count)-\(seed)", user: user,
                                traits: ["plan": traits[Int(random.next() % 3)], "name": .string("n\(person)")],
                                at: TimeInterval(time))
                        ))
                }
            }
            for _ in 0..<(6 + Int(random.next() % 10)) {
                count += 1
                let time = second()
                let isBuy = random.next() % 3 != 0
                var properties: [String: JSONValue] = [:]
                if let plan = plans[Int(random.next() % UInt64(plans.count))] { properties["plan"] = plan }
                if isBuy, let amount = amounts[Int(random.next() % UInt64(amounts.count))] {
                    properties["amount"] = amount
                }
                timed.append(
                    (
                        TimeInterval(time),
                        TestMessages.ingest(
                            isBuy ? "buy" : "view", id: "e\(count)-\(seed)", session: "s\(person)", user: user,
                            anonymous: anonymous, at: TimeInterval(time), properties: properties)
                    ))
            }
        }
        return timed.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// A message's properties (or an identify call's traits).
    static func members(_ message: IngestMessage, _ key: String) -> [String: JSONValue] {
        guard case .object(let payload) = try? JSONParser.parse(message.payload),
            case .object(let members) = payload[key]
        else { return [:] }
        return members
    }

    /// A value as a filter compares its text: text as it is, booleans and numbers as their JSON.
    static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text): text
        case .bool(let flag): flag ? "true" : "false"
        case .int(let number): String(number)
        case .double(let number): String(number)
        default: nil
        }
    }

    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let number): Double(number)
        case .double(let number): number
        default: nil
        }
    }

    /// Whether `value` passes `filter`.
    static func passes(_ value: JSONValue?, _ filter: PropertyFilter) -> Bool {
        switch filter.op {
        case .equals: return text(value) == filter.value
        case .notEquals: return text(value) != filter.value
        // The generated values are ASCII, so lowercasing is the ASCII folding the filter does.
        case .contains: return text(value).map { $0.lowercased().contains(filter.value.lowercased()) } ?? false
        case .greaterThan: return number(value).map { $0 > Double(filter.value) ?? 0 } ?? false
        case .lessThan: return number(value).map { $0 < Double(filter.value) ?? 0 } ?? false
        case .isSet: return value != nil && value != .null
        }
    }

    /// Each user's newest value of each trait (their identify calls in the order sent).
    static func traits(_ messages: [IngestMessage]) -> [String: [String: JSONValue]] {
        var traits: [String: [String: JSONValue]] = [:]
        for message in messages where message.type == .identify {
            guard let user = message.userId else { continue }
            traits[user, default: [:]].merge(members(message, "traits")) { $1 }
        }
        return traits
    }

    /// One series' value per interval of `range` and over all of it, as the messages give it.
    static func expected(
        _ query: TrendQuery, range: AnalyticsRange, _ messages: [IngestMessage]
    ) -> (values: [Double?], aggregate: Double?) {
        let traits = traits(messages)
        let calendar = range.calendar
        var counts: [Int64: Int] = [:]
        var people: [Int64: Set<String>] = [:]
        var numbers: [Int64: [Double]] = [:]
        for message in messages
        where message.name == query.event && message.timestamp >= range.from && message.timestamp < range.to {
            let properties = members(message, "properties")
            let person = message.userId ?? message.anonymousId ?? ""
            let passes = query.filters.allSatisfy { filter in
                filter.scope == .event
                    ? Self.passes(properties[filter.property], filter)
                    : Self.passes(message.userId.flatMap { traits[$0]?[filter.property] }, filter)
            }
            guard passes else { continue }
            let index = calendar.index(of: message.timestamp, query.interval)
            counts[index, default: 0] += 1
            people[index, default: []].insert(person)
            if let property = query.measure.property, let value = number(properties[property]) {
                numbers[index, default: []].append(value)
            }
        }
        func value(_ count: Int, _ people: Set<String>, _ numbers: [Double]) -> Double? {
            switch query.measure {
            case .total: Double(count)
            case .users: Double(people.count)
            case .active: nil
            case .sum: numbers.reduce(0, +)
            case .average: numbers.isEmpty ? nil : numbers.reduce(0, +) / Double(numbers.count)
            case .median: SQLitePercentile.percentile(0.5, of: numbers)
            case .p90: SQLitePercentile.percentile(0.9, of: numbers)
            }
        }
        let indexes = Array(range.intervals(query.interval))
        let values = indexes.map { value(counts[$0] ?? 0, people[$0] ?? [], numbers[$0] ?? []) }
        let aggregate = value(
            counts.values.reduce(0, +), people.values.reduce(into: Set()) { $0.formUnion($1) },
            numbers.values.flatMap { $0 })
        return (values, aggregate)
    }

    static func close(_ a: Double?, _ b: Double?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return abs(a - b) <= 1e-9 * max(1, abs(a), abs(b))
    }

    static func close(_ a: [Double?]?, _ b: [Double?]?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.count == b.count && zip(a, b).allSatisfy { close($0, $1) }
    }

    /// `A / B` per position: nothing where B is 0 or either has no value.
    static func divided(_ a: [Double?], _ b: [Double?]) -> [Double?] {
        zip(a, b).map { a, b in
            guard let a, let b, b != 0 else { return nil }
            return a / b
        }
    }

    static func expectAnswers(_ storage: SQLCollectorStorage, _ messages: [IngestMessage]) async throws {
        let query = CollectorQuery(storage: storage)
        let now = TestMessages.base.addingTimeInterval(20 * Self.day + 3_600)
        let from = Timestamp.format(TestMessages.base.addingTimeInterval(10 * Self.day))
        let to = Timestamp.format(TestMessages.base.addingTimeInterval(20 * Self.day))
        let filters: [[String: String]] = [
            [:],
            ["where.1.property": "plan", "where.1.value": "pro"],
            ["where.1.property": "plan", "where.1.op": "ne", "where.1.value": "pro"],
            ["where.1.property": "plan", "where.1.op": "contains", "where.1.value": "e"],
            ["where.1.property": "plan", "where.1.op": "contains", "where.1.value": "PR"],
            ["where.1.property": "amount", "where.1.op": "gt", "where.1.value": "30"],
            ["where.1.property": "amount", "where.1.op": "lt", "where.1.value": "20.5"],
            ["where.1.property": "amount", "where.1.op": "set"],
            ["where.1.property": "person.plan", "where.1.value": "pro"],
            [
                "where.1.property": "person.plan", "where.1.op": "ne", "where.1.value": "pro",
                "where.2.property": "plan", "where.2.op": "set",
            ],
        ]
        let maths: [[String: String]] = [
            [:], ["math": "users"], ["math": "sum", "property": "amount"], ["math": "avg", "property": "amount"],
            ["math": "median", "property": "amount"], ["math": "p90", "property": "amount"],
        ]
        var checked = 0
        for (offset, filter) in filters.enumerated() {
            let math = maths[offset % maths.count]
            for interval in offset % 3 == 0 ? ["day", "week"] : ["day"] {
                var values: [String: String] = [
                    "event": "buy", "b.event": "view", "b.math": "users", "formula": "A / B", "interval": interval,
                    "from": from, "to": to, "compare": "previous",
                ]
                values.merge(filter) { $1 }
                values.merge(math) { $1 }
                let parameters = AnalyticsParameters(now: now, names: Array(values.keys)) { values[$0] }
                let insight = try parameters.trends()
                let result = try await query.trends(source: "default", insight)
                let previous = try #require(insight.previous)
                var expected: [String: (values: [Double?], aggregate: Double?)] = [:]
                var expectedBefore: [String: (values: [Double?], aggregate: Double?)] = [:]
                for series in insight.series {
                    let line = try #require(result.lines(of: series.label).first)
                    let range = series.query.range
                    let want = Self.expected(series.query, range: range, messages)
                    let before = Self.expected(series.query, range: previous, messages)
                    expected[series.label] = want
                    expectedBefore[series.label] = before
                    let described = "\(series.label) \(series.query.measure) \(filter) per \(interval)"
                    #expect(Self.close(line.values, want.values), "\(described): \(line.values) ≠ \(want.values)")
                    #expect(Self.close(line.aggregate, want.aggregate), "\(described) over the range")
                    #expect(Self.close(line.previousValues, before.values), "\(described), the period before")
                    #expect(Self.close(line.previousAggregate, before.aggregate), "\(described), before, in all")
                }
                let a = try #require(expected["A"])
                let b = try #require(expected["B"])
                let formula = try #require(result.lines(of: "formula").first)
                #expect(Self.close(formula.values, Self.divided(a.values, b.values)), "A / B with \(filter)")
                #expect(Self.close(formula.aggregate, Self.divided([a.aggregate], [b.aggregate])[0]))
                #expect(a.values.contains { ($0 ?? 0) > 0 }, "\(filter) picks some events")
                checked += 1
            }
        }
        // Every filter by days, and every third one by weeks too.
        #expect(checked == filters.count + (filters.count + 2) / 3)
    }

    @Test(arguments: StorageKind.insightStores)
    func severalSeriesWithFiltersAndFormulasEqualTheMessages(kind: StorageKind) async throws {
        let messages = Self.traffic(seed: 47)
        try await withStorage(kind) { storage async throws in
            try await AnalyticsBruteForceTests.store(messages, in: storage)
            try await Self.expectAnswers(storage, messages)
        }
    }

    /// A series of people without filters is counted over its whole range from the daily people
    /// (each person once however many days they did it), not from its events: with the event's
    /// daily people gone it counts no one, while the same series with a filter (read from the
    /// events), or while the daily people are still being built, counts everyone.
    @Test(arguments: StorageKind.insightStores)
    func peopleOverTheRangeAreTheUnionOfTheDailyPeople(kind: StorageKind) async throws {
        let messages = Self.traffic(seed: 48)
        try await withStorage(kind) { storage async throws in
            try await AnalyticsBruteForceTests.store(messages, in: storage)
            let query = CollectorQuery(storage: storage)
            let now = TestMessages.base.addingTimeInterval(20 * Self.day + 3_600)
            let values = [
                "event": "view", "math": "users", "interval": "week",
                "from": Timestamp.format(TestMessages.base.addingTimeInterval(2 * Self.day)),
                "to": Timestamp.format(TestMessages.base.addingTimeInterval(20 * Self.day)),
            ]
            func aggregate(_ extra: [String: String]) async throws -> (Double?, Double?, weeks: Double) {
                let merged = values.merging(extra) { $1 }
                let insight = try AnalyticsParameters(now: now, names: Array(merged.keys)) { merged[$0] }.trends()
                let line = try #require(try await query.trends(source: "default", insight).lines(of: "A").first)
                let want = Self.expected(insight.series[0].query, range: insight.series[0].query.range, messages)
                return (line.aggregate, want.aggregate, line.values.reduce(0) { $0 + ($1 ?? 0) })
            }
            let filtered = ["where.1.property": "missing", "where.1.op": "ne", "where.1.value": "x"]
            let (whole, wanted, weeks) = try await aggregate([:])
            #expect(Self.close(whole, wanted))
            #expect((wanted ?? 0) > 1)
            #expect(weeks > (whole ?? 0), "people viewed in several weeks of the range, and count once in all")
            try await storage.backend.write { transaction in
                _ = try await transaction.query("DELETE FROM daily_people WHERE event = 'view'", [])
            }
            #expect(try await aggregate([:]).0 == 0)
            // While the daily people are being built (an upgrade, a new time zone), the events
            // count everyone over the range.
            try await storage.backend.write { transaction in
                _ = try await transaction.query(
                    """
                    INSERT INTO daily_people_state (source, time_zone, rebuild_through, complete) \
                    VALUES ('default', 'UTC', 0, 0) ON CONFLICT (source) DO UPDATE SET complete = 0
                    """, [])
            }
            #expect(Self.close(try await aggregate([:]).0, wanted))
            let (fromEvents, same, _) = try await aggregate(filtered)
            #expect(Self.close(fromEvents, same) && Self.close(fromEvents, wanted))
        }
    }

    /// The presets are whole days of the source's time zone up to the end of today, and the
    /// period before them as long.
    @Test func datePresetsAreWholeLocalDays() throws {
        let tokyo = try #require(SourceCalendar(identifier: "Asia/Tokyo"))
        // 2026-03-31 20:30 UTC: already April 1st in Tokyo.
        let now = try #require(Timestamp.parse("2026-03-31T20:30:00Z"))
        func ranges(_ preset: String, _ calendar: SourceCalendar) throws -> (String, String, String, String) {
            let values = ["event": "buy", "date": preset]
            let insight = try AnalyticsParameters(now: now, calendar: calendar) { values[$0] }.trends()
            let range = insight.series[0].query.range
            let before = try #require(
                try AnalyticsParameters(now: now, calendar: calendar) {
                    (values.merging(["compare": "previous"]) { $1 })[$0]
                }.trends().previous)
            func text(_ time: Int64) -> String { Timestamp.format(Timestamp.date(milliseconds: time)) }
            return (text(range.from), text(range.to), text(before.from), text(before.to))
        }
        #expect(
            try ranges("7d", .utc)
                == (
                    "2026-03-25T00:00:00.000Z", "2026-04-01T00:00:00.000Z", "2026-03-18T00:00:00.000Z",
                    "2026-03-25T00:00:00.000Z"
                ))
        #expect(
            try ranges("today", tokyo)
                == (
                    "2026-03-31T15:00:00.000Z", "2026-04-01T15:00:00.000Z", "2026-03-30T15:00:00.000Z",
                    "2026-03-31T15:00:00.000Z"
                ))
        #expect(
            try ranges("month", tokyo)
                == (
                    "2026-03-31T15:00:00.000Z", "2026-04-30T15:00:00.000Z", "2026-02-28T15:00:00.000Z",
                    "2026-03-31T15:00:00.000Z"
                ))
        #expect(
            try ranges("month", .utc)
                == (
                    "2026-03-01T00:00:00.000Z", "2026-04-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z",
                    "2026-03-01T00:00:00.000Z"
                ))
        // Today is by hours unless an interval is asked for.
        let today = try AnalyticsParameters(now: now) { ["event": "buy", "date": "today"][$0] }.trends()
        #expect(today.series[0].query.interval == .hour)
    }
}
