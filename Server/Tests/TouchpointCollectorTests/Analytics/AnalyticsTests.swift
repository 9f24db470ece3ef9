import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// People, trends, funnels and retention, on SQLite and PostgreSQL.
struct AnalyticsTests {
    static let day: TimeInterval = 86_400

    /// An identify or alias call, as the decoder produces it.
    static func call(
        _ type: MessageType, id: String, user: String, anonymous: String? = nil, previous: String? = nil,
        group: String? = nil, traits: [String: JSONValue] = [:], at offset: TimeInterval = 0
    ) -> IngestMessage {
        let time = Timestamp.milliseconds(TestMessages.base.addingTimeInterval(offset))
        var payload: [String: JSONValue] = [
            "type": .string(type.rawValue), "messageId": .string(id), "userId": .string(user),
            "traits": .object(traits),
        ]
        if let anonymous { payload["anonymousId"] = .string(anonymous) }
        if let previous { payload["previousId"] = .string(previous) }
        if let group { payload["groupId"] = .string(group) }
        return IngestMessage(
            messageId: id, type: type, name: nil, userId: user, anonymousId: anonymous, sessionId: nil,
            timestamp: time, originalTimestamp: nil, sentAt: nil, receivedAt: time,
            payload: JSONValue.object(payload).jsonString())
    }

    static func query(_ storage: SQLCollectorStorage) -> CollectorQuery { CollectorQuery(storage: storage) }

    static func parameters(_ values: [String: String], now: TimeInterval = 30 * day) -> AnalyticsParameters {
        AnalyticsParameters(now: TestMessages.base.addingTimeInterval(now)) { values[$0] }
    }

    static func at(_ offset: TimeInterval) -> String { Timestamp.format(TestMessages.base.addingTimeInterval(offset)) }

    // MARK: People

    /// a1 browses, then signs in as u1 (identify with both ids); u1 changes plan; a9 is aliased to
    /// u2; u1 joins group g1; u3 never identifies.
    static func seedPeople(_ storage: SQLCollectorStorage) async throws {
        let messages: [IngestMessage] = [
            TestMessages.ingest("browse", id: "e1", session: "s0", user: nil, anonymous: "a1", at: 10),
            call(.identify, id: "i1", user: "u1", anonymous: "a1", traits: ["plan": "free", "name": "Ada"], at: 20),
            TestMessages.ingest("buy", id: "e2", session: "s1", user: "u1", anonymous: "a1", at: 30),
            call(.identify, id: "i2", user: "u1", traits: ["plan": "pro"], at: 40),
            TestMessages.ingest("browse", id: "e3", session: "s9", user: nil, anonymous: "a9", at: 50),
            call(.alias, id: "al1", user: "u2", previous: "a9", at: 60),
            TestMessages.ingest("buy", id: "e4", session: "s2", user: "u2", anonymous: "a9", at: 70),
            call(.group, id: "g1", user: "u1", group: "acme", traits: ["name": "Acme", "seats": 5], at: 80),
            call(.group, id: "g2", user: "u1", group: "acme", traits: ["seats": 8], at: 90),
            TestMessages.ingest("browse", id: "e5", session: "s3", user: "u3", anonymous: "a3", at: 100),
        ]
        #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
    }

    @Test(arguments: StorageKind.available)
    func peopleMergeTraitsIdentitiesAndGroups(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            try await Self.seedPeople(storage)
            let query = Self.query(storage)
            let everyone = try await query.people(source: "default")
            #expect(everyone.items.map(\.userId) == ["u3", "u1", "u2"])  // last seen first
            #expect(everyone.items.first { $0.userId == "u1" }?.traits == ["plan": "pro", "name": "Ada"])

            #expect(try await query.people(source: "default", search: "ADA").items.map(\.userId) == ["u1"])
            #expect(try await query.people(source: "default", search: "a9").items.map(\.userId) == ["u2"])
            #expect(try await query.people(source: "default", search: "U3").items.map(\.userId) == ["u3"])
            #expect(try await query.people(source: "default", search: "100%").items.isEmpty)
            let paged = try await query.people(source: "default", page: PageRequest(limit: 2))
            #expect(paged.items.count == 2)
            let rest = try await query.people(source: "default", page: PageRequest(limit: 2, cursor: paged.nextCursor))
            #expect(rest.items.map(\.userId) == ["u2"])

            let u1 = try #require(try await query.person(source: "default", userId: "u1"))
            #expect(u1.person.traits == ["plan": "pro", "name": "Ada"])
            #expect(u1.person.anonymousIds == ["a1"])
            #expect(u1.person.groups == ["acme": ["name": "Acme", "seats": 8]])
            #expect(u1.person.eventCount == 5)  // two identify calls, a buy, two group calls
            // The anonymous session before sign-in is theirs, and counts for first seen.
            #expect(Set(u1.sessions.map(\.sessionId)) == ["s0", "s1"])
            #expect(u1.person.firstSeen == TestMessages.base.addingTimeInterval(10))
            #expect(Set(u1.events.map(\.messageId)) == ["e1", "e2"])

            let u2 = try #require(try await query.person(source: "default", userId: "u2"))
            #expect(u2.person.anonymousIds == ["a9"])
            #expect(Set(u2.sessions.map(\.sessionId)) == ["s9", "s2"])
            #expect(try await query.person(source: "default", userId: "nobody") == nil)
        }
    }

    @Test(arguments: StorageKind.available)
    func theFirstMergeOfAnAnonymousIDWinsAndResendsChangeNothing(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let first = Self.call(.identify, id: "i1", user: "u1", anonymous: "shared", at: 1)
            let second = Self.call(.identify, id: "i2", user: "u2", anonymous: "shared", at: 2)
            #expect(try await storage.insert([first], source: "default") == [true])
            #expect(try await storage.insert([second, first], source: "default") == [true, false])
            #expect(try await storage.mergedAnonymousIDs(source: "default", userId: "u1") == ["shared"])
            #expect(try await storage.mergedAnonymousIDs(source: "default", userId: "u2") == [])
            let profile = try #require(try await storage.profile(source: "default", userId: "u1"))
            #expect(profile.eventCount == 1)  // the resent identify was not counted again
        }
    }

    /// analytics-swift sends an alias made while anonymous without `previousId` (it sends its
    /// user id, which it has not got): its anonymous id is the one merged. A `previousId` wins.
    @Test(arguments: StorageKind.available)
    func anAliasWithoutAPreviousIDMergesItsAnonymousID(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let bare = Self.call(.alias, id: "al1", user: "u1", anonymous: "visitor-1", at: 1)
            let named = Self.call(.alias, id: "al2", user: "u2", anonymous: "visitor-2", previous: "old-2", at: 2)
            #expect(try await storage.insert([bare, named], source: "default") == [true, true])
            #expect(try await storage.mergedAnonymousIDs(source: "default", userId: "u1") == ["visitor-1"])
            #expect(try await storage.mergedAnonymousIDs(source: "default", userId: "u2") == ["old-2"])
        }
    }

    // MARK: Trends

    /// `buy` over three days: plan pro ×5 (by three people), free ×3, team ×1, none ×2.
    static func seedTrend(_ storage: SQLCollectorStorage) async throws {
        var messages: [IngestMessage] = []
        func buy(_ id: String, day: Double, user: String?, anonymous: String, plan: JSONValue?) {
            var properties: [String: JSONValue] = ["amount": 3]
            if let plan { properties["plan"] = plan }
            messages.append(
                TestMessages.ingest(
                    "buy", id: id, session: "s-\(anonymous)", user: user, anonymous: anonymous, at: day * Self.day + 60,
                    properties: properties))
        }
        buy("b1", day: 0, user: "u1", anonymous: "a1", plan: "pro")
        buy("b2", day: 0, user: "u1", anonymous: "a1", plan: "pro")
        buy("b3", day: 0, user: nil, anonymous: "a2", plan: "pro")
        buy("b4", day: 2, user: "u3", anonymous: "a3", plan: "pro")
        buy("b5", day: 2, user: "u3", anonymous: "a3", plan: "pro")
        buy("b6", day: 0, user: "u4", anonymous: "a4", plan: "free")
        buy("b7", day: 2, user: "u4", anonymous: "a4", plan: "free")
        buy("b8", day: 2, user: "u5", anonymous: "a5", plan: "free")
        buy("b9", day: 2, user: "u6", anonymous: "a6", plan: "team")
        buy("b10", day: 0, user: "u7", anonymous: "a7", plan: nil)
        buy("b11", day: 0, user: "u7", anonymous: "a7", plan: .null)
        messages.append(TestMessages.ingest("view", id: "v1", session: "s-a1", user: "u1", anonymous: "a1", at: 60))
        // a2 later signs in as u1: their buy counts for u1.
        messages.append(Self.call(.identify, id: "i1", user: "u1", anonymous: "a2", at: 3 * Self.day))
        #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
    }

    @Test(arguments: StorageKind.insightStores)
    func trendsCountPerIntervalWithTheTopValuesAbsentAndOther(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            try await Self.seedTrend(storage)
            var trend = try Self.parameters([
                "event": "buy", "from": Self.at(0), "to": Self.at(3 * Self.day), "breakdown": "plan",
            ]).trend()
            trend.topValues = 2
            let result = try await Self.query(storage).trend(source: "default", trend)
            #expect(result.totals.map(\.count) == [6, 0, 5])
            // Day 0: u1 (b1, b2 and a2's b3, merged), u4, u7; day 2: u3, u4, u5, u6.
            #expect(result.totals.map(\.users) == [3, 0, 4])
            #expect(result.series.map(\.value) == ["pro", "free", nil, nil])  // absent, then other
            #expect(result.series.map(\.isOther) == [false, false, false, true])
            #expect(result.series[0].points.map(\.count) == [3, 0, 2])
            #expect(result.series[0].points.map(\.users) == [1, 0, 1])
            #expect(result.series[1].points.map(\.count) == [1, 0, 2])
            #expect(result.series[2].points.map(\.count) == [2, 0, 0])  // absent and null alike
            #expect(result.series[3].points.map(\.count) == [0, 0, 1])
            #expect(
                result.totals.map(\.start)
                    == (0..<3).map { TestMessages.base.addingTimeInterval(Double($0) * Self.day) })

            // The three ways to the same answer: one pass (no more values than series), one pass
            // and a count of "other", and the top values first (too many values for one pass).
            let onePass = try await Self.query(storage).trend(source: "default", trend, groupLimit: 1000)
            let byTopValues = try await Self.query(storage).trend(source: "default", trend, groupLimit: 1)
            #expect(onePass == result)
            #expect(byTopValues == result)
            // Six (day, value) pairs: as many as the pass groups, and one more.
            for limit in [6, 5] {
                let atTheLimit = try await Self.query(storage).trend(source: "default", trend, groupLimit: limit)
                #expect(atTheLimit == result, "grouping at most \(limit) pairs")
            }
            var wide = trend
            wide.topValues = 10
            let everyValue = try await Self.query(storage).trend(source: "default", wide)
            #expect(everyValue.series.map(\.value) == ["pro", "free", nil, "team"])
            let hasOther = everyValue.series.contains { $0.isOther }
            #expect(!hasOther)
            #expect(everyValue.series[3].points.map(\.users) == [0, 0, 1])
            let everyValueByTop = try await Self.query(storage).trend(source: "default", wide, groupLimit: 1)
            #expect(everyValueByTop.series == everyValue.series)

            let hourly = try Self.parameters([
                "event": "buy", "interval": "hour", "from": Self.at(0), "to": Self.at(2 * 3600),
            ]).trend()
            let hours = try await Self.query(storage).trend(source: "default", hourly)
            #expect(hours.totals.map(\.count) == [6, 0])
            #expect(hours.series.isEmpty)
        }
    }

    /// Values that Swift's `String` equates but whose bytes differ (a composed and a decomposed
    /// "é") are two values, as the databases group them: each is its own series of a trend and
    /// its own group of a funnel, with its own counts, on every store and every way of counting.
    @Test(arguments: StorageKind.insightStores)
    func valuesOfDifferentBytesAreDifferentValues(kind: StorageKind) async throws {
        let composed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        #expect(composed == decomposed)  // to Swift
        try await withStorage(kind) { storage async throws in
            var messages: [IngestMessage] = []
            for (index, value) in [composed, composed, decomposed].enumerated() {
                let person = "p\(index)"
                messages.append(
                    TestMessages.ingest(
                        "view", id: "v\(index)", user: person, anonymous: nil, at: 60 + Double(index),
                        properties: ["city": .string(value)]))
                messages.append(
                    TestMessages.ingest("buy", id: "b\(index)", user: person, anonymous: nil, at: 120 + Double(index)))
            }
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            let range = ["from": Self.at(0), "to": Self.at(Self.day)]
            for limit in [1000, 1] {
                let trend = try Self.parameters(range.merging(["event": "view", "breakdown": "city"]) { $1 }).trend()
                let result = try await Self.query(storage).trend(source: "default", trend, groupLimit: limit)
                #expect(
                    result.series.map { $0.value.map { Array($0.utf8) } } == [
                        Array(composed.utf8), Array(decomposed.utf8),
                    ],
                    "\(kind), \(limit) groups")
                #expect(result.series.map { $0.points.map(\.count) } == [[2], [1]], "\(kind), \(limit) groups")
                // One top value: the other is "other", once.
                var top = trend
                top.topValues = 1
                let topped = try await Self.query(storage).trend(source: "default", top, groupLimit: limit)
                #expect(topped.series.map(\.isOther) == [false, true], "\(kind), \(limit) groups")
                #expect(topped.series.map { $0.points.map(\.count) } == [[2], [1]], "\(kind), \(limit) groups")
            }
            let funnel = try Self.parameters(range.merging(["steps": "view,buy", "breakdown": "city"]) { $1 }).funnel()
            let groups = try await Self.query(storage).funnel(source: "default", funnel).groups
            #expect(groups.map { $0.value.map { Array($0.utf8) } } == [Array(composed.utf8), Array(decomposed.utf8)])
            #expect(groups.map { $0.steps.map(\.users) } == [[2, 2], [1, 1]])
            // Two series and their sum, each value's line on its own, with the period before.
            let values = range.merging([
                "event": "view", "b.event": "view", "formula": "A + B", "breakdown": "city", "compare": "previous",
            ]) { $1 }
            let insight = try AnalyticsParameters(now: TestMessages.base.addingTimeInterval(30 * Self.day)) {
                values[$0]
            }.trends()
            let lines = try await Self.query(storage).trends(source: "default", insight).lines(of: "formula")
                .filter(\.isBreakdown)
            #expect(lines.map { $0.value.map { Array($0.utf8) } } == [Array(composed.utf8), Array(decomposed.utf8)])
            #expect(lines.map(\.values) == [[4], [2]])
            #expect(lines.map(\.previousValues) == [[0], [0]])
        }
    }

    /// Event names whose bytes differ are different names on every store, even where Swift calls
    /// them equal (a composed and a decomposed "é"): each counts its own events and people, with
    /// and without a filter, in the definitions, the top events, a funnel and paths. The expected
    /// counts are the events as sent: p0 does the composed name then the decomposed one, p2 the
    /// composed one; so the composed name has 2 events of 2 people, the decomposed one 1 of 1.
    @Test(arguments: StorageKind.insightStores)
    func namesOfDifferentBytesAreDifferentNames(kind: StorageKind) async throws {
        let composed = "Caf\u{E9} Opened"
        let decomposed = "Cafe\u{301} Opened"
        #expect(composed == decomposed)  // to Swift
        try await withStorage(kind) { storage async throws in
            let messages = [
                TestMessages.ingest(
                    composed, id: "c0", user: "p0", anonymous: nil, at: 60, properties: ["plan": "pro"]),
                TestMessages.ingest(
                    decomposed, id: "d0", user: "p0", anonymous: nil, at: 70, properties: ["plan": "pro"]),
                TestMessages.ingest(
                    composed, id: "c2", user: "p2", anonymous: nil, at: 80, properties: ["plan": "pro"]),
            ]
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            let range = ["from": Self.at(0), "to": Self.at(Self.day)]
            for (name, expected) in [(composed, 2), (decomposed, 1)] {
                for filter in [[:], ["where.1.property": "plan", "where.1.value": "pro"]] {
                    let values = range.merging(["event": name, "interval": "day"]) { $1 }.merging(filter) { $1 }
                    let trend = try Self.parameters(values).trend()
                    let result = try await Self.query(storage).trend(source: "default", trend)
                    #expect(result.totals.map(\.count) == [expected], "\(kind), \(Array(name.utf8)), \(filter)")
                    #expect(result.totals.map(\.users) == [expected], "\(kind), \(Array(name.utf8)), \(filter)")
                }
            }
            let definitions = try await Self.query(storage).definitions(source: "default")
            #expect(
                Set(definitions.events.map { Array($0.name.utf8) }) == [Array(composed.utf8), Array(decomposed.utf8)])
            #expect(definitions.events.map(\.events).sorted() == [1, 2])
            let top = try await Self.query(storage).topEvents(
                source: "default",
                range: TimeRange(from: TestMessages.base, to: TestMessages.base.addingTimeInterval(Self.day)))
            #expect(top.map { Array($0.name.utf8) } == [Array(composed.utf8), Array(decomposed.utf8)])
            #expect(top.map(\.count) == [2, 1])
            let funnel = try Self.parameters(range.merging(["steps": "\(composed),\(decomposed)"]) { $1 }).funnel()
            let steps = try await Self.query(storage).funnel(source: "default", funnel).steps
            #expect(steps.map(\.users) == [2, 1], "\(kind)")
            let paths = try Self.parameters(range.merging(["start": composed]) { $1 }).paths()
            let root = try await Self.query(storage).paths(source: "default", paths).root
            #expect(root.people == 2, "\(kind)")
            #expect(root.children.map { $0.event.map { Array($0.utf8) } } == [Array(decomposed.utf8)], "\(kind)")
        }
    }

    /// An event stored without a person key (it came with neither a user nor an anonymous id)
    /// counts among its value's events and not among its people, whichever way the groups are
    /// counted: one pass (with and without a count of "other") or the top values first.
    @Test(arguments: StorageKind.available)
    func anEventWithoutAPersonCountsAsAnEventOnly(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            try await Self.seedTrend(storage)
            _ = try await storage.backend.writeStatement(
                "UPDATE events SET person_key = NULL WHERE payload LIKE '%\"team\"%'", [])
            for topValues in [2, 10] {
                var trend = try Self.parameters([
                    "event": "buy", "from": Self.at(0), "to": Self.at(3 * Self.day), "breakdown": "plan",
                ]).trend()
                trend.topValues = topValues
                for limit in [1000, 1] {
                    let result = try await Self.query(storage).trend(source: "default", trend, groupLimit: limit)
                    // b9, the only `team`: its own series among ten top values, else "other".
                    let team = try #require(result.series.last)
                    #expect(team.isOther == (topValues == 2))
                    #expect(team.points.map(\.count) == [0, 0, 1], "\(topValues) values, \(limit) groups")
                    #expect(team.points.map(\.users) == [0, 0, 0], "\(topValues) values, \(limit) groups")
                    #expect(result.series[0].points.map(\.users) == [1, 0, 1])
                }
            }
        }
    }

    @Test func weeksStartOnMonday() {
        // 2026-01-01 was a Thursday; its week began on Monday 2025-12-29.
        let utc = SourceCalendar.utc
        let start = utc.start(of: utc.index(of: Timestamp.milliseconds(TestMessages.base), .week), .week)
        #expect(Timestamp.format(Timestamp.date(milliseconds: start)) == "2025-12-29T00:00:00.000Z")
    }

    // MARK: Funnels

    @Test(arguments: StorageKind.insightStores)
    func funnelsCountPeopleWhoWentThroughTheStepsInOrderWithinTheWindow(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            var messages: [IngestMessage] = []
            func event(_ name: String, _ user: String, _ minutes: Double, plan: String = "pro") {
                messages.append(
                    TestMessages.ingest(
                        name, id: "\(user)-\(name)-\(minutes)", session: "s-\(user)", user: user,
                        anonymous: "a-\(user)",
                        at: minutes * 60, properties: ["plan": .string(plan)]))
            }
            event("open", "p1", 1)
            event("cart", "p1", 3)
            event("pay", "p1", 7)  // all three: 2 and 4 minutes apart
            event("open", "p2", 1)
            event("cart", "p2", 5)
            event("pay", "p2", 200)  // outside the hour
            event("open", "p3", 2)  // only the first step
            event("cart", "p4", 1)
            event("open", "p4", 2)
            event("pay", "p4", 3)  // cart came before open: stops at open
            event("open", "p5", 1)
            event("cart", "p5", 2, plan: "free")
            event("pay", "p5", 3)  // the filtered step is not matched
            event("open", "p6", 1)
            event("cart", "p6", 4)
            event("open", "p6", 100)
            event("cart", "p6", 101)
            event("pay", "p6", 106)  // the second attempt gets through: 1 and 5 minutes apart
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            let funnel = try Self.parameters([
                "steps": "open,cart[plan=pro],pay", "window": "1h", "from": Self.at(0), "to": Self.at(Self.day),
            ]).funnel()
            let result = try await Self.query(storage).funnel(source: "default", funnel)
            #expect(result.steps.map(\.users) == [6, 3, 2])
            #expect(result.steps.map(\.step.description) == ["open", "cart[plan=pro]", "pay"])
            #expect(result.steps[1].conversionFromFirst == 0.5)
            #expect(abs(result.steps[2].conversionFromPrevious - 2.0 / 3.0) < 1e-9)
            // From open to cart: p1 2 min, p2 4 min, p6 1 min; from cart to pay: p1 4 min, p6 5 min.
            #expect(result.steps[1].medianSecondsFromPrevious == 120)
            #expect(result.steps[2].medianSecondsFromPrevious == 270)
            #expect(result.steps[0].medianSecondsFromPrevious == nil)
        }
    }

    /// A person's step events at one millisecond are taken in the order they arrived, not by name
    /// or by where a store's index put them (both SQL stores read the name-and-minute index, whose
    /// order puts `cart` before `view`). ClickHouse keeps no order of arrival finer than the
    /// millisecond, so it is not asked.
    @Test(arguments: StorageKind.available)
    func stepsAtOneTimeAreTakenInTheOrderTheyArrived(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            // Each its own write, so the order of arrival is certain.
            func event(_ name: String, _ user: String) async throws {
                let message = TestMessages.ingest(
                    name, id: "\(user)-\(name)", session: "s-\(user)", user: user, anonymous: "a-\(user)", at: 60)
                #expect(try await storage.insert([message], source: "default") == [true])
            }
            try await event("view", "p1")
            try await event("cart", "p1")  // after the view: through both steps
            try await event("cart", "p2")
            try await event("view", "p2")  // the cart came first: the first step only
            let funnel = try Self.parameters([
                "steps": "view,cart", "window": "1h", "from": Self.at(0), "to": Self.at(Self.day),
            ]).funnel()
            let result = try await Self.query(storage).funnel(source: "default", funnel)
            #expect(result.steps.map(\.users) == [2, 1])
            #expect(result.timeToConvert.medianSeconds == 0)
        }
    }

    // MARK: Retention

    @Test(arguments: StorageKind.available)
    func retentionGroupsPeopleByTheirFirstStartAndCountsReturns(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            var messages: [IngestMessage] = []
            func event(_ name: String, _ user: String, day: Double) {
                messages.append(
                    TestMessages.ingest(
                        name, id: "m\(messages.count)", session: "s-\(user)", user: user, anonymous: "a-\(user)",
                        at: day * Self.day + 3600))
            }
            // Cohort of day 0: p1 (returns on days 1 and 2), p2 (day 2), p3 (never).
            for user in ["p1", "p2", "p3"] { event("signup", user, day: 0) }
            event("open", "p1", day: 1)
            event("open", "p1", day: 1)
            event("open", "p1", day: 2)
            event("open", "p2", day: 2)
            // Cohort of day 1: p4 (returns on day 2); p1's second signup does not move them.
            event("signup", "p4", day: 1)
            event("signup", "p1", day: 1)
            event("open", "p4", day: 2)
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            let retention = try Self.parameters(
                [
                    "start": "signup", "return": "open", "interval": "day", "periods": "3", "from": Self.at(0),
                    "to": Self.at(2 * Self.day),
                ], now: 2 * Self.day + 7200
            ).retention()
            let result = try await Self.query(storage).retention(
                source: "default", retention, now: TestMessages.base.addingTimeInterval(2 * Self.day + 7200))
            #expect(result.cohorts.map(\.size) == [3, 1])
            #expect(result.cohorts[0].returned == [0, 1, 2])  // periods 0, 1, 2 (3 has not begun)
            #expect(result.cohorts[1].returned == [0, 1])
            #expect(result.cohorts[0].shares.map { ($0 * 1000).rounded() / 1000 } == [0, 0.333, 0.667])
        }
    }

    // MARK: Parameters

    @Test(arguments: [
        (["event": "buy", "interval": "fortnight"], "interval"),
        (["interval": "day"], "event"),
        (["event": "buy", "breakdown": "a.b"], "breakdown"),
        (["event": "buy", "from": "yesterday"], "from"),
        (["event": "buy", "from": "2026-02-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"], "from"),
        (["event": "buy", "interval": "hour", "from": "2025-01-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"], "from"),
    ])
    func badTrendParametersAreNamed(values: [String: String], parameter: String) {
        #expect(throws: CollectorError.self) { try Self.parameters(values).trend() }
        do {
            _ = try Self.parameters(values).trend()
        } catch {
            #expect(error.code == .invalidParameter)
            #expect(error.path == parameter, "\(error.message)")
        }
    }

    @Test(arguments: [
        (["steps": "open"], "steps"),
        (["steps": "open,cart[plan]"], "steps"),
        (["steps": "open,cart[pl an=x]"], "steps"),
        (["steps": "open,,pay"], "steps"),
        (["steps": "open,pay", "window": "1y"], "window"),
        (["steps": "open,pay", "window": "100d"], "window"),
    ])
    func badFunnelParametersAreNamed(values: [String: String], parameter: String) {
        do {
            _ = try Self.parameters(values).funnel()
            Issue.record("accepted \(values)")
        } catch {
            #expect(error.path == parameter, "\(error.message)")
        }
    }

    @Test(arguments: [
        (["start": "signup", "interval": "hour"], "interval"),
        (["interval": "week"], "start"),
        (["start": "signup", "periods": "0"], "periods"),
    ])
    func badRetentionParametersAreNamed(values: [String: String], parameter: String) {
        do {
            _ = try Self.parameters(values).retention()
            Issue.record("accepted \(values)")
        } catch {
            #expect(error.path == parameter, "\(error.message)")
        }
    }
}
