import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Funnels with filters, breakdowns and conversion times, paths, cohorts, and the cohort filter
/// of every insight, over generated traffic with merges, against answers worked out here from the
/// messages themselves; on both databases.
struct InsightsBruteForceTests {
    static let day: TimeInterval = 86_400
    static let names = ["view", "view", "cart", "buy", "open", "search"]

    /// Visitors browsing anonymously, half of them signing in with traits (some twice, the plan
    /// changed), one aliased; events with a `plan` (text in two cases, a boolean, a number), an
    /// `amount` (numbers, and a number written as text) and a `channel` (empty in one case, of
    /// several bytes a character in another), each at its own second over ten days; in time order.
    static func traffic(seed: UInt64) -> [IngestMessage] {
        var random = SeededRandomNumberGenerator(seed: seed)
        var timed: [(Int, IngestMessage)] = []
        var used = Set<Int>()
        func second(after start: Int = 0) -> Int {
            while true {
                let candidate = start + Int(random.next() % UInt64(10 * 86_400 - start))
                if used.insert(candidate).inserted { return candidate }
            }
        }
        func pick<Value>(_ values: [Value]) -> Value { values[Int(random.next() % UInt64(values.count))] }
        let plans: [JSONValue?] = ["free", "pro", "Pro annual", "team", true, 3, nil]
        let amounts: [JSONValue?] = [5, 12.5, 40, "12", nil]
        let channels: [JSONValue?] = ["Google Ads", "google", "Newsletter", "Nëwsletter ✉", "", nil]
        for visitor in 0..<30 {
            let anonymous = "v\(visitor)"
            let signIn = visitor % 2 == 0 ? second() : nil
            for _ in 0..<(5 + Int(random.next() % 16)) {
                let time = second()
                var properties: [String: JSONValue] = [:]
                for (name, values) in [("plan", plans), ("amount", amounts), ("channel", channels)] {
                    if let value = pick(values) { properties[name] = value }
                }
                let user = (signIn.map { time > $0 } ?? false) ? "u\(visitor)" : nil
                timed.append(
                    (
                        time,
                        TestMessages.ingest(
                            pick(names), id: "m\(timed.count)-\(seed)", session: "s-\(anonymous)", user: user,
                            anonymous: anonymous, at: TimeInterval(time), properties: properties)
                    ))
            }
            if let signIn {
                let traits: [String: JSONValue] = [
                    "plan": pick(["free", "pro", "Pro annual"]), "age": .int(20 + visitor),
                    "vip": .bool(visitor % 4 == 0),
                ]
                timed.append(
                    (
                        signIn,
                        AnalyticsTests.call(
                            .identify, id: "i\(visitor)-\(seed)", user: "u\(visitor)", anonymous: anonymous,
                            traits: traits,
                            at: TimeInterval(signIn))
                    ))
                if visitor % 3 == 0 {
                    let later = second(after: signIn)
                    timed.append(
                        (
                            later,
                            AnalyticsTests.call(
                                .identify, id: "j\(visitor)-\(seed)", user: "u\(visitor)", traits: ["plan": "team"],
                                at: TimeInterval(later))
                        ))
                }
            }
        }
        let alias = second()
        timed.append(
            (
                alias,
                AnalyticsTests.call(
                    .alias, id: "al-\(seed)", user: "u-aliased", previous: "v1", at: TimeInterval(alias))
            ))
        return timed.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Each message's person as an id (user id, else the user its anonymous id was first merged
    /// into, else the anonymous id).
    static func people(of messages: [IngestMessage]) -> [String?] {
        var merges: [String: String] = [:]
        for message in messages {
            guard let user = message.userId else { continue }
            var anonymous = message.anonymousId
            if message.type == .alias, case .object(let members)? = try? JSONParser.parse(message.payload) {
                anonymous = members["previousId"]?.stringValue ?? message.anonymousId
            }
            guard message.type == .identify || message.type == .alias, let anonymous, anonymous != user,
                merges[anonymous] == nil
            else { continue }
            merges[anonymous] = user
        }
        return messages.map { $0.userId ?? $0.anonymousId.map { merges[$0] ?? $0 } }
    }

    static func properties(_ message: IngestMessage) -> [String: JSONValue] {
        guard case .object(let members)? = try? JSONParser.parse(message.payload) else { return [:] }
        return members["properties"]?.objectValue ?? members["traits"]?.objectValue ?? [:]
    }

    // MARK: Cohorts

    static func members(_ conditions: [CohortCondition], _ messages: [IngestMessage], now: Int64) -> Set<String> {
        let people = people(of: messages)
        var traits: [String: [String: JSONValue]] = [:]
        for message in messages where message.type == .identify {
            if let user = message.userId { traits[user, default: [:]].merge(properties(message)) { $1 } }
        }
        var found: Set<String>?
        for condition in conditions {
            var matching = Set<String>()
            switch condition {
            case .performed(let event, let times, let days):
                var counts: [String: Int] = [:]
                for (message, person) in zip(messages, people)
                where message.name == event && message.timestamp >= now - Int64(days) * 86_400_000
                    && message.timestamp < now
                {
                    if let person { counts[person, default: 0] += 1 }
                }
                matching = Set(counts.filter { $0.value >= times }.keys)
            case .trait(let filter):
                matching = Set(traits.filter { filter.matches($0.value[filter.property]) }.keys)
            }
            found = found.map { $0.intersection(matching) } ?? matching
        }
        return found ?? []
    }

    // MARK: Funnels

    struct FunnelAnswer: Equatable {
        var reached: [Int]
        var byValue: [String?: [Int]]
        var durations: [Int64]
    }

    /// Each person's furthest attempt, worked out plainly: every first step in the range tried as
    /// a start, each next step the first matching event after the one before within the window.
    static func funnel(_ query: FunnelQuery, _ messages: [IngestMessage], cohort: Set<String>?) -> FunnelAnswer {
        var byPerson: [String: [(time: Int64, name: String, properties: [String: JSONValue])]] = [:]
        for (message, person) in zip(messages, people(of: messages)) {
            guard let person, let name = message.name, cohort?.contains(person) ?? true,
                message.timestamp >= query.range.from, message.timestamp < query.range.to + query.window
            else { continue }
            let properties = properties(message)
            guard query.filters.allSatisfy({ $0.matches(properties[$0.property]) }) else { continue }
            byPerson[person, default: []].append((message.timestamp, name, properties))
        }
        func isStep(_ event: (time: Int64, name: String, properties: [String: JSONValue]), _ step: Int) -> Bool {
            let step = query.steps[step]
            return event.name == step.event && step.filters.allSatisfy { $0.matches(event.properties[$0.property]) }
        }
        var answer = FunnelAnswer(reached: Array(repeating: 0, count: query.steps.count), byValue: [:], durations: [])
        for events in byPerson.values {
            var best: (times: [Int64], value: String?)?
            for (start, event) in events.enumerated()
            where isStep(event, 0) && event.time >= query.range.from && event.time < query.range.to {
                var times = [event.time]
                var position = start
                while times.count < query.steps.count,
                    let next = events.indices.first(where: {
                        $0 > position && events[$0].time - event.time <= query.window && isStep(events[$0], times.count)
                    })
                {
                    times.append(events[next].time)
                    position = next
                }
                if times.count > (best?.times.count ?? 0) {
                    best = (times, query.breakdown.flatMap { event.properties[$0] }.flatMap(PropertyFilter.text))
                }
            }
            guard let best else { continue }
            for step in best.times.indices { answer.reached[step] += 1 }
            var counts = answer.byValue[best.value] ?? Array(repeating: 0, count: query.steps.count)
            for step in best.times.indices { counts[step] += 1 }
            answer.byValue[best.value] = counts
            if best.times.count == query.steps.count { answer.durations.append(best.times.last! - best.times[0]) }
        }
        return answer
    }

    // MARK: Paths

    static func paths(_ query: PathQuery, _ messages: [IngestMessage], cohort: Set<String>?) -> [PathCount] {
        let people = people(of: messages).map { person in person.flatMap { cohort?.contains($0) ?? true ? $0 : nil } }
        return paths(query, messages, people: people)
    }

    /// The paths of `messages` (in the order they happened), each of `people` (nil: no one's).
    static func paths<Person: Hashable>(_ query: PathQuery, _ messages: [IngestMessage], people: [Person?])
        -> [PathCount]
    {
        var byPerson: [Person: [(time: Int64, name: String)]] = [:]
        for (message, person) in zip(messages, people) {
            guard let person, let name = message.name, !query.exclude.contains(name) else { continue }
            byPerson[person, default: []].append((message.timestamp, name))
        }
        var counts: [[String]: Int] = [:]
        for events in byPerson.values {
            guard
                let anchor = events.firstIndex(where: {
                    $0.name == query.event && $0.time >= query.range.from && $0.time < query.range.to
                })
            else { continue }
            let start = events[anchor].time
            let way =
                query.direction == .after
                ? events[anchor...].filter { $0.time <= start + query.window }.map(\.name)
                : events[...anchor].filter { $0.time >= start - query.window }.map(\.name).reversed()
            var collapsed: [String] = []
            for name in way where collapsed.last != name { collapsed.append(name) }
            counts[Array(collapsed.dropFirst().prefix(query.steps)), default: 0] += 1
        }
        return counts.map { PathCount(events: $0.key, people: $0.value) }
    }

    // MARK: The test

    static func ask(_ storage: SQLCollectorStorage, _ messages: [IngestMessage]) async throws {
        let now = TestMessages.base.addingTimeInterval(11 * day)
        let clock = ManualClock(start: now)
        let query = CollectorQuery(storage: storage, clock: clock)
        let library = SavedLibrary(storage: storage, clock: clock)
        let nowMilliseconds = Timestamp.milliseconds(now)
        func parameters(_ values: [String: String]) -> AnalyticsParameters {
            AnalyticsParameters(now: now) { values[$0] }
        }
        let from = Timestamp.format(TestMessages.base.addingTimeInterval(3600))
        let to = Timestamp.format(TestMessages.base.addingTimeInterval(8 * day))

        // Cohorts: by what people did, by a trait, and both.
        let definitions: [[CohortCondition]] = [
            [.performed(event: "view", times: 3, days: 6)],
            [.trait(try PropertyFilter.parse("plan~PRO"))],
            [.trait(try PropertyFilter.parse("age>30"))],
            [.trait(try PropertyFilter.parse("plan!=team")), .performed(event: "buy", times: 1, days: 11)],
        ]
        var cohorts: [(Cohort, Set<String>)] = []
        for (index, conditions) in definitions.enumerated() {
            let cohort = try await library.createCohort(source: "default", name: "c\(index)", conditions: conditions)
            let expected = members(conditions, messages, now: nowMilliseconds)
            #expect(!expected.isEmpty, "cohort \(conditions) holds someone")
            var found = Set<String>()
            var cursor: String?
            repeat {
                let page = try await query.members(
                    source: "default", of: cohort, page: PageRequest(limit: 7, cursor: cursor))
                #expect(page.size == expected.count, "\(conditions)")
                found.formUnion(page.page.items.map(\.id))
                cursor = page.page.nextCursor
            } while cursor != nil
            #expect(found == expected, "members of \(conditions)")
            cohorts.append((cohort, expected))
        }

        // Funnels: step filters of each kind, filters on every step, a breakdown, a cohort.
        let funnels: [[String: String]] = [
            ["steps": "view,cart,buy", "window": "2d"],
            ["steps": "view[channel~GOOGLE],cart[amount>10],buy", "window": "3d", "breakdown": "plan"],
            ["steps": "open,view[plan!=pro;amount<41],buy[channel?]", "where": "plan!=team", "window": "5d"],
            ["steps": "search,view[plan=Pro annual],cart", "breakdown": "channel", "cohort": "\(cohorts[0].0.id)"],
            ["steps": "view,buy", "where": "amount>4;channel?", "window": "12h", "cohort": "\(cohorts[1].0.id)"],
        ]
        for values in funnels {
            let funnel = try parameters(values.merging(["from": from, "to": to]) { $1 }).funnel()
            let answer = try await query.funnel(source: "default", funnel)
            let cohort = funnel.cohort.flatMap { id in cohorts.first { $0.0.id == id }?.1 }
            let expected = Self.funnel(funnel, messages, cohort: cohort)
            #expect(answer.steps.map(\.users) == expected.reached, "\(values)")
            #expect(expected.reached[0] > 0, "\(values) has people")
            if funnel.breakdown != nil {
                var groups: [String?: [Int]] = [:]
                for group in answer.groups { groups[group.value] = group.steps.map(\.users) }
                #expect(answer.groups.allSatisfy { !$0.isOther })
                #expect(groups == expected.byValue, "\(values) by \(funnel.breakdown ?? "")")
            }
            let times = answer.timeToConvert
            #expect(times.users == expected.durations.count)
            #expect(times.medianSeconds == FunnelResult.median(expected.durations).map { $0 / 1000 })
            let buckets = times.buckets.map { bucket in
                expected.durations.filter { duration in
                    let seconds = Double(duration) / 1000
                    return seconds >= Double(bucket.fromSeconds)
                        && (seconds < Double(bucket.toSeconds)
                            || (bucket == times.buckets.last && seconds <= Double(bucket.toSeconds)))
                }.count
            }
            #expect(times.buckets.map(\.users) == buckets, "\(values)")
            #expect(times.buckets.last?.toSeconds == funnel.window / 1000)
        }

        // Paths after and before, a few steps deep, leaving events out, of a cohort.
        let pathQueries: [[String: String]] = [
            ["start": "view"], ["start": "cart", "steps": "2", "top": "2"], ["end": "buy", "steps": "3"],
            ["start": "open", "exclude": "view,search", "window": "2d"],
            ["end": "cart", "steps": "2", "cohort": "\(cohorts[2].0.id)"],
            ["start": "view", "steps": "1", "window": "30m"],
        ]
        for values in pathQueries {
            let paths = try parameters(values.merging(["from": from, "to": to]) { $1 }).paths()
            let answer = try await query.paths(source: "default", paths)
            let cohort = paths.cohort.flatMap { id in cohorts.first { $0.0.id == id }?.1 }
            let expected = PathResult.build(answer.query, paths: Self.paths(paths, messages, cohort: cohort))
            #expect(answer == expected, "\(values)")
            #expect(answer.root.people > 0 && !answer.root.children.isEmpty, "\(values) has paths")
        }

        // Trends and retention of a cohort's people: the same as over the messages of those people.
        for (cohort, people) in cohorts.prefix(2) {
            let kept = zip(messages, Self.people(of: messages)).filter { message, person in
                message.name == nil || person.map(people.contains) == true
            }.map(\.0)
            var trend = try parameters([
                "event": "view", "interval": "day", "breakdown": "plan", "from": from, "to": to,
                "cohort": "\(cohort.id)",
            ]).trend()
            trend.topValues = 3
            let answer = try await query.trend(source: "default", trend)
            var expected = AnalyticsBruteForceTests.expectedTrend(trend, .init(kept))
            expected.query.people = answer.query.people
            #expect(answer == expected, "trend of \(cohort.name)")
            #expect(answer.totals.contains { $0.count > 0 })
            let retention = try parameters([
                "start": "view", "return": "buy", "interval": "day", "periods": "5", "from": from, "to": to,
                "cohort": "\(cohort.id)",
            ]).retention()
            let returned = try await query.retention(source: "default", retention, now: now)
            var expectedRetention = AnalyticsBruteForceTests.expectedRetention(retention, .init(kept), now: now)
            expectedRetention.query.people = returned.query.people
            #expect(returned == expectedRetention, "retention of \(cohort.name)")
            #expect(returned.cohorts.contains { $0.size > 0 })
            let stickiness = try parameters([
                "event": "view", "interval": "week", "from": from, "to": to, "cohort": "\(cohort.id)",
            ]).stickiness()
            let sticky = try await query.stickiness(source: "default", stickiness)
            #expect(sticky == AnalyticsBruteForceTests.expectedStickiness(stickiness, .init(kept)))
            #expect(sticky.intervals.contains { $0.people.reduce(0, +) > 0 }, "stickiness of \(cohort.name)")
            let lifecycle = try parameters([
                "event": "view", "interval": "day", "from": from, "to": to, "cohort": "\(cohort.id)",
            ]).lifecycle()
            let cycle = try await query.lifecycle(source: "default", lifecycle)
            #expect(cycle == AnalyticsBruteForceTests.expectedLifecycle(lifecycle, .init(kept)))
            #expect(cycle.intervals.contains { $0.new > 0 }, "lifecycle of \(cohort.name)")
        }
    }

    @Test(arguments: StorageKind.insightStores)
    func answersEqualTheOnesWorkedOutFromTheMessages(kind: StorageKind) async throws {
        let messages = Self.traffic(seed: 47)
        try await withStorage(kind) { storage async throws in
            // In batches, so that merges arrive in other writes than the events they merge.
            for start in stride(from: 0, to: messages.count, by: 23) {
                let batch = Array(messages[start..<min(start + 23, messages.count)])
                #expect(try await storage.insert(batch, source: "default").allSatisfy { $0 })
            }
            try await Self.ask(storage, messages)
        }
    }
}
