import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Trends, funnels and retention over generated traffic with merges, against the same answers
/// worked out here from the messages themselves; on both databases, as stored at ingest and
/// after the upgrade to person numbers (schema 12) from rows stored without them.
struct AnalyticsBruteForceTests {
    static let day: TimeInterval = 86_400

    /// Visitors browsing anonymously, half of them signing in (an identify with both ids), some
    /// aliased (one before its anonymous id sends anything), one merged twice (the first wins),
    /// one user id that is also another visitor's anonymous id; events a, b, c, open and signup
    /// with a `plan` that is text, a boolean, a number or absent, each at its own second over
    /// ten days (plus `shift`, so that two runs' times differ); sent in arrival order, which is
    /// time order.
    static func traffic(seed: UInt64, shift: TimeInterval = 0) -> [IngestMessage] {
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
                anonymous: anonymous, at: TimeInterval(offset) + shift, properties: plan.map { ["plan": $0] } ?? [:])
            timed.append((TimeInterval(offset), message))
        }
        func call(_ type: MessageType, user: String, anonymous: String? = nil, previous: String? = nil, at offset: Int)
        {
            timed.append(
                (
                    TimeInterval(offset),
                    AnalyticsTests.call(
                        type, id: "c\(timed.count)-\(seed)", user: user, anonymous: anonymous, previous: previous,
                        at: TimeInterval(offset) + shift)
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

    /// Each message's person as the analytics define it (user id, else the user its anonymous id
    /// was first merged into, else the anonymous id), as a number: only equality matters.
    static func people(of messages: [IngestMessage]) -> [Int64?] {
        var merges: [String: String] = [:]
        for message in messages {
            guard let user = message.userId else { continue }
            let anonymous: String?
            switch message.type {
            case .identify: anonymous = message.anonymousId
            case .alias:
                guard case .object(let members) = try? JSONParser.parse(message.payload) else { continue }
                anonymous = members["previousId"]?.stringValue
            default: continue
            }
            if let anonymous, anonymous != user, merges[anonymous] == nil { merges[anonymous] = user }
        }
        var numbers: [String: Int64] = [:]
        return messages.map { message in
            guard let person = message.userId ?? message.anonymousId.map({ merges[$0] ?? $0 }) else { return nil }
            if let number = numbers[person] { return number }
            numbers[person] = Int64(numbers.count)
            return numbers[person]
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

    static func expectedTrend(_ query: TrendQuery, _ messages: [IngestMessage]) -> TrendResult {
        let people = people(of: messages)
        var totals: [Int64: (count: Int, people: Set<Int64>)] = [:]
        var byValue: [String?: [Int64: (count: Int, people: Set<Int64>)]] = [:]
        var valueCounts: [String: Int] = [:]
        for (message, person) in zip(messages, people)
        where message.name == query.event && message.timestamp >= query.range.from
            && message.timestamp < query.range.to
        {
            let index = query.interval.index(of: message.timestamp)
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
        for (value, points) in byValue {
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
        return TrendResult.assemble(query, totals: totals.mapValues { ($0.count, $0.people.count) }, rows: rows)
    }

    static func expectedFunnel(_ query: FunnelQuery, _ messages: [IngestMessage]) -> FunnelResult {
        let names = Set(query.steps.map(\.event))
        let rows = zip(messages, people(of: messages)).compactMap { message, person -> FunnelRow? in
            guard let person, let name = message.name, names.contains(name),
                message.timestamp >= query.range.from, message.timestamp < query.range.to + query.window,
                case .object(let members)? = try? JSONParser.parse(message.payload)
            else { return nil }
            let steps = query.matches(event: name, properties: members["properties"]?.objectValue ?? [:])
            return steps == 0 ? nil : FunnelRow(person: person, timestamp: message.timestamp, steps: steps, value: nil)
        }
        return FunnelResult.compute(query, rows: rows)
    }

    static func expectedRetention(_ query: RetentionQuery, _ messages: [IngestMessage], now: Date) -> RetentionResult {
        var firstStarts: [Int64: Int64] = [:]
        var returns: [(person: Int64, index: Int64)] = []
        let interval = query.interval
        let returnsFrom = interval.start(of: interval.index(of: query.range.from))
        let returnsTo = interval.start(of: interval.index(of: query.range.to - 1) + Int64(query.periods) + 1)
        for (message, person) in zip(messages, people(of: messages)) {
            guard let person else { continue }
            if message.name == query.startEvent, message.timestamp >= query.range.from,
                message.timestamp < query.range.to
            {
                firstStarts[person] = min(firstStarts[person] ?? .max, message.timestamp)
            }
            if message.name == query.returnEvent, message.timestamp >= returnsFrom, message.timestamp < returnsTo {
                returns.append((person, interval.index(of: message.timestamp)))
            }
        }
        return RetentionResult.compute(
            query, firstStarts: firstStarts, returns: returns, now: Timestamp.milliseconds(now))
    }

    /// Asks each question of the storage and compares it with the answer worked out here.
    static func expectAnswers(_ storage: SQLCollectorStorage, _ messages: [IngestMessage]) async throws {
        let query = CollectorQuery(storage: storage)
        let now = TestMessages.base.addingTimeInterval(11 * day)
        func parameters(_ values: [String: String]) -> AnalyticsParameters {
            AnalyticsParameters(now: now) { values[$0] }
        }
        let from = Timestamp.format(TestMessages.base.addingTimeInterval(3600))
        let to = Timestamp.format(TestMessages.base.addingTimeInterval(10 * day - 3600))
        for (event, interval) in [("a", "day"), ("open", "hour"), ("signup", "week")] {
            var trend = try parameters(
                ["event": event, "interval": interval, "breakdown": "plan", "from": from, "to": to]
            ).trend()
            trend.topValues = 2
            let answer = try await query.trend(source: "default", trend)
            #expect(answer == expectedTrend(trend, messages), "trend of \(event) per \(interval)")
            #expect(answer.totals.contains { $0.users > 0 })
            trend.breakdown = nil
            #expect(try await query.trend(source: "default", trend) == expectedTrend(trend, messages))
        }
        for steps in ["a,b,c", "open,a[plan=pro],b"] {
            let funnel = try parameters(["steps": steps, "window": "2d", "from": from, "to": to]).funnel()
            let answer = try await query.funnel(source: "default", funnel)
            #expect(answer == expectedFunnel(funnel, messages), "funnel \(steps)")
            #expect(answer.steps[0].users > 0)
        }
        for interval in ["day", "week"] {
            let retention = try parameters(
                ["start": "signup", "return": "open", "interval": interval, "periods": "8", "from": from, "to": to]
            ).retention()
            let answer = try await query.retention(source: "default", retention, now: now)
            #expect(answer == expectedRetention(retention, messages, now: now), "retention per \(interval)")
            #expect(answer.cohorts.contains { $0.size > 0 })
        }
    }

    @Test(arguments: StorageKind.available)
    func answersEqualTheOnesWorkedOutFromTheMessages(kind: StorageKind) async throws {
        let messages = Self.traffic(seed: 20)
        let more = Self.traffic(seed: 21, shift: 0.5)
        try await withStorage(kind) { storage async throws in
            // In batches, so that merges arrive in other writes than the events they merge.
            for start in stride(from: 0, to: messages.count, by: 17) {
                let batch = Array(messages[start..<min(start + 17, messages.count)])
                #expect(try await storage.insert(batch, source: "default").allSatisfy { $0 })
            }
            try await Self.expectAnswers(storage, messages)
        }
        // The same messages as schema 7 stored them, upgraded: schema 8 merges their identities,
        // schema 12 numbers their people.
        try await OlderSchemas.upgrade(kind, from: 7) { backend async throws in
            try await OlderSchemas.store(messages, source: "default", in: backend)
        } opened: { storage async throws in
            try await Self.expectAnswers(storage, messages)
            // And traffic after the upgrade counts its people with the ones before.
            #expect(try await storage.insert(more, source: "default").allSatisfy { $0 })
            try await Self.expectAnswers(storage, messages + more)
        }
    }
}
