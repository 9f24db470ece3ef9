import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Hostile text through every value that reaches a SQL or ClickHouse statement — event names,
/// property names, filter values, breakdowns, cohort conditions, person ids, funnels and paths —
/// on every insight store: the answers count exactly the events seeded for each value, never a
/// decoy that a value spliced into a statement, escaped twice or read as a `LIKE` pattern would
/// match (`a` for `a' OR '1'='1`, `100Xoff` for `100%_off`, `it''s` for `it's`, a composed "é" for
/// a decomposed one). The values stay values.
///
/// Every message goes through ingest's decoder first (``BatchDecoder``), so each hostile value is
/// one ingest accepts; the queries' parameters go through a query string (``QueryParameters``),
/// as the routes read them. Each expected number is worked out from what the test seeds, and
/// each is written next to where it comes from.
struct HostileValuesTests {
    static let day: TimeInterval = 86_400
    static let source = "default"
    /// When the queries are asked: every seeded event is on day 0, in its first hour.
    static let now = TestMessages.base.addingTimeInterval(30 * day)

    // MARK: The hostile texts

    static let quoted = #"it's "quoted""#
    /// A backslash inside and a trailing one.
    static let backslashes = #"back\slash\"#
    static let lineBreak = "line\r\nbreak"
    /// Written with escapes, so the bytes are certain: `Ünïcödé 日本語 🎉`, its "é" composed.
    static let unicode = "\u{DC}n\u{EF}c\u{F6}d\u{E9} \u{65E5}\u{672C}\u{8A9E} \u{1F389}"
    /// "e" and a combining acute accent: to Swift equal to the composed "é", to every store not.
    static let decomposed = "e\u{301}"
    static let composed = "\u{E9}"
    static let dropTable = "'); DROP TABLE events; --"
    static let orTrue = "a' OR '1'='1"
    static let selectOne = #"\"; SELECT 1; --"#
    static let wildcards = "100%_off"
    /// A backslash and the text `u0000`: not a NUL, and ingest keeps it (the JSON is `\\u0000`).
    static let escapedNUL = #"not\u0000nul"#
    /// Quotes, a backslash and `LIKE`'s wildcards, 40 times: 200 bytes, the longest event name
    /// ingest accepts (``MessageReader/maximumNameBytes``) and the longest filter value a query takes.
    static let longest = String(repeating: #"'"\%_"#, count: 40)
    /// The same, 2,048 times: a 10 KB property value (an event may have 32 KB; names are capped).
    static let tenKB = String(repeating: #"'"\%_"#, count: 2048)
    /// 256 bytes, the longest user or anonymous id ingest accepts (``MessageReader/maximumIdentifierBytes``).
    static let longestID = String(repeating: #"'"\%_"#, count: 51) + "!"
    static let longestAnonymousID = String(repeating: #"_%\"'"#, count: 51) + "?"
    /// A name with a comma and brackets, which the `steps` parameter cannot spell.
    static let commaAndBrackets = #"it's "quoted", [x]"#

    // MARK: Helpers

    /// A track call as an SDK sends it.
    static func track(
        _ event: String, id: String, user: String? = nil, anonymous: String? = nil, at offset: TimeInterval,
        properties: [String: JSONValue] = [:]
    ) -> JSONValue {
        var members: [String: JSONValue] = [
            "type": "track", "event": .string(event), "messageId": .string(id),
            "timestamp": .string(Timestamp.format(TestMessages.base.addingTimeInterval(offset))),
            "properties": .object(properties),
        ]
        if let user { members["userId"] = .string(user) }
        if let anonymous { members["anonymousId"] = .string(anonymous) }
        return .object(members)
    }

    /// An identify call.
    static func identify(
        id: String, user: String, anonymous: String? = nil, traits: [String: JSONValue], at offset: TimeInterval
    ) -> JSONValue {
        var members: [String: JSONValue] = [
            "type": "identify", "messageId": .string(id), "userId": .string(user), "traits": .object(traits),
            "timestamp": .string(Timestamp.format(TestMessages.base.addingTimeInterval(offset))),
        ]
        if let anonymous { members["anonymousId"] = .string(anonymous) }
        return .object(members)
    }

    /// Decodes `messages` as ingest does — every one must be accepted, each hostile value being
    /// within ingest's limits — and stores them, in batches under the request limit.
    static func ingest(_ messages: [JSONValue], into storage: SQLCollectorStorage) async throws {
        for start in stride(from: 0, to: messages.count, by: 20) {
            let chunk = Array(messages[start..<min(start + 20, messages.count)])
            let request = try BatchDecoder().decode(
                TestMessages.batch(chunk), endpoint: .batch, receivedAt: Timestamp.milliseconds(now))
            #expect(request.rejections.isEmpty, "\(request.rejections.map(\.description))")
            #expect(request.messages.count == chunk.count)
            #expect(try await storage.insert(request.messages, source: source).allSatisfy { $0 })
        }
    }

    /// The analytics parameters of `values`, sent as a query string and read back as the routes
    /// read them (every name checked: an unknown one is a 400).
    static func parameters(_ values: [String: String]) throws -> AnalyticsParameters {
        let query = values.sorted { $0.key < $1.key }
            .map { "\(QueryParameters.encoded($0.key))=\(QueryParameters.encoded($0.value))" }
            .joined(separator: "&")
        let decoded = try QueryParameters(query)
        for (name, value) in values {
            #expect(decoded.get(name).map { Array($0.utf8) } == Array(value.utf8), "\(name) read back")
        }
        return AnalyticsParameters(now: now, names: decoded.names) { decoded.get($0) }
    }

    /// Day 0 (`interval` day) or its first hour (`interval` hour): one interval either way.
    static func range(hour: Bool = false) -> [String: String] {
        [
            "from": Timestamp.format(TestMessages.base),
            "to": Timestamp.format(TestMessages.base.addingTimeInterval(hour ? 3600 : day)),
            "interval": hour ? "hour" : "day",
        ]
    }

    /// The one point of a trend of `values` over ``range(hour:)``.
    static func point(
        _ query: CollectorQuery, _ values: [String: String], hour: Bool = false, filters expected: Int? = nil,
        _ label: String = ""
    ) async throws -> TrendPoint? {
        let trend = try parameters(range(hour: hour).merging(values) { $1 }).trend()
        if let expected { #expect(trend.filters.count == expected, "the filters were read: \(values)") }
        let result = try await query.trend(source: source, trend)
        #expect(result.totals.count == 1, "\(label)")
        return result.totals.first
    }

    /// A text's bytes, as every store compares text (Swift's `==` equates a composed and a
    /// decomposed "é").
    static func bytes(_ text: String?) -> [UInt8]? { text.map { Array($0.utf8) } }

    /// The events of each series of a breakdown with any, by its value's bytes (`other`:
    /// `[0xFF]`, no text's bytes).
    static func tally(_ result: TrendResult) -> [[UInt8]?: Int] {
        var tally: [[UInt8]?: Int] = [:]
        for series in result.series where series.total > 0 {
            tally[series.isOther ? [0xFF] : bytes(series.value), default: 0] += series.total
        }
        return tally
    }

    /// The error a query's parameters are refused with, when they are.
    static func refusal(_ values: [String: String], _ read: (AnalyticsParameters) throws -> Void) -> CollectorError? {
        do {
            try read(try parameters(values))
            return nil
        } catch let error as CollectorError {
            return error
        } catch {
            Issue.record("not a CollectorError: \(error)")
            return nil
        }
    }

    // MARK: Event names

    /// Each name's events, seeded one person each: a trend of the name counts exactly these.
    /// Decoys first — what a broken quoting would find instead — then the hostile names.
    static let names: [(name: String, events: Int)] = [
        ("a", 1), ("100Xoff", 2), (#"it''s "quoted""#, 3), (#"it's \"quoted\""#, 4), (#"back\\slash\\"#, 5),
        (composed, 6), ("e", 7),
        (quoted, 8), (backslashes, 9), (lineBreak, 10), (unicode, 11), (decomposed, 12), (dropTable, 13),
        (orTrue, 14), (selectOne, 15), (wildcards, 16), (escapedNUL, 17), (longest, 18), (commaAndBrackets, 19),
    ]

    @Test(arguments: StorageKind.insightStores)
    func hostileEventNamesCountOnlyTheirOwnEvents(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            var messages: [JSONValue] = []
            for (index, entry) in Self.names.enumerated() {
                for number in 0..<entry.events {
                    messages.append(
                        Self.track(
                            entry.name, id: "n\(index)-\(number)", anonymous: "n\(index)-\(number)",
                            at: 60 + Double(messages.count), properties: ["k": 1]))
                }
            }
            #expect(messages.count == 190)  // 1 + 2 + … + 19
            try await Self.ingest(messages, into: storage)
            let query = CollectorQuery(storage: storage)
            for (name, events) in Self.names {
                let label = "\(kind): \(name.debugDescription)"
                // Each of its `events` events was done by a person of its own: `events` events and
                // as many people, by the day (the daily people), by the hour (the events: ClickHouse
                // where it holds them), with a filter every event passes (the events, by the day),
                // and as daily active people.
                let byDay = try await Self.point(query, ["event": name], label)
                #expect(byDay?.count == events, "\(label) by day")
                #expect(byDay?.users == events, "\(label) by day")
                let byHour = try await Self.point(query, ["event": name], hour: true, label)
                #expect(byHour?.count == events, "\(label) by hour")
                #expect(byHour?.users == events, "\(label) by hour")
                let filtered = try await Self.point(
                    query, ["event": name, "where.1.property": "k", "where.1.op": "set"], filters: 1, label)
                #expect(filtered?.count == events, "\(label) filtered")
                #expect(filtered?.users == events, "\(label) filtered")
                let active = try await Self.point(query, ["event": name, "math": "dau"], label)
                #expect(active?.active == events, "\(label) daily active")
                // The same people, each a cohort of day 0 of a retention of the name.
                let retention = try Self.parameters([
                    "start": name, "interval": "day", "periods": "1", "from": Timestamp.format(TestMessages.base),
                    "to": Timestamp.format(TestMessages.base.addingTimeInterval(Self.day)),
                ]).retention()
                let cohorts = try await query.retention(
                    source: Self.source, retention, now: TestMessages.base.addingTimeInterval(2 * Self.day))
                #expect(cohorts.cohorts.map(\.size) == [events], "\(label) retention")
                // Its paths: everyone who did it, and nothing after (each person did one event).
                var paths = try Self.parameters(Self.range().merging(["start": "x"]) { $1 }).paths()
                paths.event = name
                let root = try await query.paths(source: Self.source, paths).root
                #expect(root.people == events, "\(label) paths")
                #expect(root.children.isEmpty, "\(label) paths")
                // The events list by name.
                let listed = try await query.events(
                    source: Self.source, filter: EventFilter(name: name), page: PageRequest(limit: 100))
                #expect(listed.items.count == events, "\(label) events")
            }
            // Every name once, by its bytes, with its events: in the definitions, the top events
            // and the names the paths read.
            let expected = Dictionary(uniqueKeysWithValues: Self.names.map { (Array($0.name.utf8), $0.events) })
            let definitions = try await query.definitions(source: Self.source)
            #expect(
                Dictionary(definitions.events.map { (Array($0.name.utf8), $0.events) }) { $0 + $1 } == expected,
                "\(kind) definitions")
            let top = try await query.topEvents(
                source: Self.source,
                range: TimeRange(from: TestMessages.base, to: TestMessages.base.addingTimeInterval(Self.day)),
                limit: 50)
            #expect(Dictionary(top.map { (Array($0.name.utf8), $0.count) }) { $0 + $1 } == expected, "\(kind) top")
            let stored = try await query.eventNames(source: Self.source)
            #expect(Set(stored.map { Array($0.utf8) }) == Set(expected.keys), "\(kind) names")
            #expect(stored.count == Self.names.count, "\(kind) names")
        }
    }

    // MARK: Filter values and breakdowns

    /// The values of `label` on `view` events, each on as many events as its number, one person
    /// each; 20 more `view` events have no `label`. 190 with a label (1 + 2 + … + 19), 210 in all.
    /// The hostile values have the larger numbers, so they are the top values of a breakdown.
    static let values: [(value: String, events: Int)] = [
        ("a", 1), ("100Xoff", 2), (#"it''s "quoted""#, 3), (#"it's \"quoted\""#, 4), (#"back\\slash\\"#, 5),
        (composed, 6), ("1", 7),
        (quoted, 8), (backslashes, 9), (lineBreak, 10), (unicode, 11), (decomposed, 12), (dropTable, 13),
        (orTrue, 14), (selectOne, 15), (wildcards, 16), (escapedNUL, 17), (longest, 18), (tenKB, 19),
    ]
    static let unlabelled = 20
    static let allViews = 210

    static func seedValues(_ storage: SQLCollectorStorage) async throws {
        var messages: [JSONValue] = []
        for (index, entry) in values.enumerated() {
            for number in 0..<entry.events {
                messages.append(
                    track(
                        "view", id: "v\(index)-\(number)", anonymous: "v\(index)-\(number)",
                        at: 60 + Double(messages.count), properties: ["label": .string(entry.value)]))
            }
        }
        for number in 0..<unlabelled {
            messages.append(
                track("view", id: "u\(number)", anonymous: "u\(number)", at: 60 + Double(messages.count)))
        }
        // `amount`: JSON numbers 1, 5, 10 and 50, and texts and a boolean that only look like them.
        let amounts: [JSONValue] = [1, 5, 10, 50, "100", .string("5' OR '1'='1"), "1e3", true]
        for (index, amount) in amounts.enumerated() {
            messages.append(
                track(
                    "pay", id: "p\(index)", anonymous: "p\(index)", at: 60 + Double(index),
                    properties: ["amount": amount])
            )
        }
        #expect(messages.count == allViews + amounts.count)
        try await ingest(messages, into: storage)
    }

    @Test(arguments: StorageKind.insightStores)
    func hostileFilterValuesMatchOnlyTheirOwnEvents(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            try await Self.seedValues(storage)
            let query = CollectorQuery(storage: storage)
            func count(_ op: String, _ value: String, hour: Bool = false) async throws -> TrendPoint? {
                try await Self.point(
                    query, ["event": "view", "where.1.property": "label", "where.1.op": op, "where.1.value": value],
                    hour: hour, filters: 1, "\(kind): \(op) \(value.debugDescription)")
            }
            for (value, events) in Self.values where value.utf8.count <= 200 {
                let label = "\(kind): \(value.debugDescription)"
                // `=`: the value's own events, one person each; `≠`: every other `view`, those
                // without a label included (210 − its own).
                let equal = try await count("eq", value)
                #expect(equal?.count == events, "\(label) =")
                #expect(equal?.users == events, "\(label) =")
                let equalByHour = try await count("eq", value, hour: true)
                #expect(equalByHour?.count == events, "\(label) = by hour")
                let other = try await count("ne", value)
                #expect(other?.count == Self.allViews - events, "\(label) ≠")
                #expect(other?.users == Self.allViews - events, "\(label) ≠")
            }
            // `contains` (ASCII letters' case ignored), each number added up from the table:
            let contains: [(text: String, events: Int, why: String)] = [
                ("%_", 16 + 18 + 19, "100%_off, the 200-byte value and the 10 KB one; not 100Xoff"),
                ("100%_OFF", 16, "100%_off alone"),
                (#"\slash\"#, 9 + 5, #"back\slash\ and the decoy back\\slash\\ (its middle)"#),
                ("\u{EF}c\u{F6}d\u{E9} \u{65E5}\u{672C}\u{8A9E} \u{1F389}", 11, "the Unicode value"),
                ("\r\n", 10, "the line break"),
                ("a' or '1'='1", 14, "a' OR '1'='1, case ignored; not a"),
                (Self.escapedNUL, 17, "the text \\u0000"),
                (#"'"\"#, 18 + 19, "the 200-byte value and the 10 KB one"),
                (Self.decomposed, 12, "the decomposed é only"),
                (Self.composed, 6 + 11, "the composed é and the Unicode value, whose é is composed"),
                (String(Self.tenKB.prefix(200)), 18 + 19, "200 bytes of the 10 KB value: it and the 200-byte value"),
                ("'); drop table", 13, "the DROP TABLE value"),
                (#"\""#, 15 + 4, #"\"; SELECT 1; -- and the decoy it's \"quoted\""#),
            ]
            for (text, events, why) in contains {
                let found = try await count("contains", text)
                #expect(found?.count == events, "\(kind): contains \(text.debugDescription): \(why)")
                #expect(found?.users == events, "\(kind): contains \(text.debugDescription): \(why)")
                let byHour = try await count("contains", text, hour: true)
                #expect(byHour?.count == events, "\(kind): contains \(text.debugDescription) by hour: \(why)")
            }
            // The 10 KB value cannot be a filter's value (200 bytes at most): refused, naming it.
            let long = Self.refusal(
                Self.range().merging([
                    "event": "view", "where.1.property": "label", "where.1.value": Self.tenKB,
                ]) { $1 }
            ) { _ = try $0.trend() }
            #expect(long?.code == .invalidParameter)
            #expect(long?.path == "where.1.value")

            // `>` and `<` compare JSON numbers only: 5, 10 and 50 are above 4; 1 and 5 below 6. The
            // texts "100", "5' OR '1'='1" and "1e3" and the boolean are no numbers.
            let above = try await Self.point(
                query, ["event": "pay", "where.1.property": "amount", "where.1.op": "gt", "where.1.value": "4"],
                filters: 1)
            #expect(above?.count == 3, "\(kind) >")
            let below = try await Self.point(
                query, ["event": "pay", "where.1.property": "amount", "where.1.op": "lt", "where.1.value": "6"],
                filters: 1)
            #expect(below?.count == 2, "\(kind) <")
            // As text, the hostile one is its own event.
            let text = try await Self.point(
                query,
                ["event": "pay", "where.1.property": "amount", "where.1.op": "eq", "where.1.value": "5' OR '1'='1"],
                filters: 1)
            #expect(text?.count == 1, "\(kind) = text")
            // A number's value that is not a number is refused, naming it.
            for op in ["gt", "lt"] {
                let refused = Self.refusal([
                    "event": "pay", "where.1.property": "amount", "where.1.op": op, "where.1.value": "4 OR 1=1",
                ]) { _ = try $0.trend() }
                #expect(refused?.code == .invalidParameter)
                #expect(refused?.path == "where.1.value")
            }
        }
    }

    @Test(arguments: StorageKind.insightStores)
    func hostileBreakdownValuesAreTheirOwnSeries(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            try await Self.seedValues(storage)
            let query = CollectorQuery(storage: storage)
            var trend = try Self.parameters(Self.range().merging(["event": "view", "breakdown": "label"]) { $1 })
                .trend()
            // Every value its own series with its own events, and the 20 without a label together.
            trend.topValues = 30
            var expected: [[UInt8]?: Int] = [nil: Self.unlabelled]
            for (value, events) in Self.values { expected[Array(value.utf8)] = events }
            // In one pass, and by the top values first (ClickHouse: the values written into the
            // statement, the 10 KB one among them).
            for limit in [CollectorQuery.trendGroupLimit, 1] {
                let result = try await query.trend(source: Self.source, trend, groupLimit: limit)
                #expect(Self.tally(result) == expected, "\(kind), \(limit) groups")
                #expect(result.totals.map(\.count) == [Self.allViews], "\(kind), \(limit) groups")
                let people = result.series.map { $0.points.map(\.users) }
                #expect(people == result.series.map { $0.points.map(\.count) }, "one person an event")
            }
            // The five top values: the 10 KB value (19), the 200-byte one (18), \u0000 (17),
            // 100%_off (16) and \"; SELECT 1; -- (15); the 20 without a label; every other
            // labelled event, 190 − (19 + 18 + 17 + 16 + 15) = 105, as "other".
            trend.topValues = 5
            let top: [[UInt8]?: Int] = [
                Array(Self.tenKB.utf8): 19, Array(Self.longest.utf8): 18, Array(Self.escapedNUL.utf8): 17,
                Array(Self.wildcards.utf8): 16, Array(Self.selectOne.utf8): 15, nil: 20, [0xFF]: 105,
            ]
            for limit in [CollectorQuery.trendGroupLimit, 1] {
                let result = try await query.trend(source: Self.source, trend, groupLimit: limit)
                #expect(Self.tally(result) == top, "\(kind), top 5, \(limit) groups")
                let other = try #require(result.series.last)
                #expect(other.isOther)
                #expect(other.points.map(\.users) == [105], "\(kind), top 5, \(limit) groups")
            }
            // By the hour, the people come from the events (ClickHouse where it holds them).
            var hourly = try Self.parameters(
                Self.range(hour: true).merging(["event": "view", "breakdown": "label"]) { $1 }
            ).trend()
            hourly.topValues = 30
            let byHour = try await query.trend(source: Self.source, hourly)
            #expect(Self.tally(byHour) == expected, "\(kind) by hour")
            // A filter with a hostile value and a breakdown: that value's series alone.
            let filtered = try Self.parameters(
                Self.range().merging([
                    "event": "view", "breakdown": "label", "where.1.property": "label", "where.1.value": Self.orTrue,
                ]) { $1 }
            ).trend()
            let one = try await query.trend(source: Self.source, filtered)
            #expect(Self.tally(one) == [Array(Self.orTrue.utf8): 14], "\(kind) filtered breakdown")
        }
    }

    // MARK: Property names

    /// Keys that look like `plan` to a careless reader, or like SQL.
    static let hostileKeys = [
        "plan'", "plan\"", "plan\\", "plan.x", "Plan", " plan", dropTable, orTrue, selectOne, unicode, lineBreak,
        longest,
    ]

    @Test(arguments: StorageKind.insightStores)
    func hostilePropertyNamesAreNeverTheFilteredProperty(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            // Three events with `plan` = pro, and one event for each hostile key = pro.
            var messages = (0..<3).map { number in
                Self.track(
                    "tagged", id: "t\(number)", anonymous: "t\(number)", at: 60 + Double(number),
                    properties: ["plan": "pro"])
            }
            for (index, key) in Self.hostileKeys.enumerated() {
                messages.append(
                    Self.track(
                        "tagged", id: "h\(index)", anonymous: "h\(index)", at: 70 + Double(index),
                        properties: [key: "pro"]))
            }
            try await Self.ingest(messages, into: storage)
            let query = CollectorQuery(storage: storage)
            let hostile = Self.hostileKeys.count
            func count(_ op: String, _ value: String? = nil) async throws -> Int? {
                var values = ["event": "tagged", "where.1.property": "plan", "where.1.op": op]
                values["where.1.value"] = value
                return try await Self.point(query, values, filters: 1, "\(kind) \(op)")?.count
            }
            // `plan` is on the three events that have it, never on one with a key like it.
            #expect(try await count("eq", "pro") == 3, "\(kind)")
            #expect(try await count("set") == 3, "\(kind)")
            #expect(try await count("ne", "pro") == hostile, "\(kind)")  // the others have no `plan`
            var trend = try Self.parameters(Self.range().merging(["event": "tagged", "breakdown": "plan"]) { $1 })
                .trend()
            trend.topValues = 30
            let byPlan = try await query.trend(source: Self.source, trend)
            #expect(Self.tally(byPlan) == [Array("pro".utf8): 3, nil: hostile], "\(kind)")
            // Every key in the definitions by its bytes: `plan` on 3 events, each hostile key on one.
            let definitions = try await query.definitions(source: Self.source)
            let tagged = try #require(definitions.events.first { $0.name == "tagged" })
            var expected = [Array("plan".utf8): 3]
            for key in Self.hostileKeys { expected[Array(key.utf8)] = 1 }
            #expect(Dictionary(tagged.properties.map { (Array($0.name.utf8), $0.events) }) { $0 + $1 } == expected)
            // A hostile name is no property name (but `Plan`, a name of its own): refused, naming
            // the parameter, wherever it goes.
            #expect(Self.hostileKeys.filter(PropertyName.isValid) == ["Plan"])
            for key in Self.hostileKeys where !PropertyName.isValid(key) {
                let base = Self.range().merging(["event": "tagged"]) { $1 }
                let asFilter = Self.refusal(base.merging(["where.1.property": key, "where.1.value": "pro"]) { $1 }) {
                    _ = try $0.trend()
                }
                #expect(asFilter?.code == .invalidParameter, "\(key.debugDescription)")
                #expect(asFilter?.path == "where.1.property", "\(key.debugDescription)")
                let asTrait = Self.refusal(
                    base.merging(["where.1.property": "person." + key, "where.1.value": "pro"]) { $1 }
                ) { _ = try $0.trend() }
                #expect(asTrait?.path == "where.1.property", "\(key.debugDescription)")
                let asBreakdown = Self.refusal(base.merging(["breakdown": key]) { $1 }) { _ = try $0.trend() }
                #expect(asBreakdown?.path == "breakdown", "\(key.debugDescription)")
                let asMath = Self.refusal(base.merging(["math": "sum", "property": key]) { $1 }) { _ = try $0.trend() }
                #expect(asMath?.path == "property", "\(key.debugDescription)")
                let asFunnelBreakdown = Self.refusal(["steps": "tagged,tagged", "breakdown": key]) {
                    _ = try $0.funnel()
                }
                #expect(asFunnelBreakdown?.path == "breakdown", "\(key.debugDescription)")
            }
            let inAStep = Self.refusal(["steps": "tagged,tagged[plan'=pro]"]) { _ = try $0.funnel() }
            #expect(inAStep?.path == "steps")
            let inWhere = Self.refusal(["steps": "tagged,tagged", "where": "a' OR '1'='1=pro"]) { _ = try $0.funnel() }
            #expect(inWhere?.path == "where")
        }
    }

    // MARK: Person ids

    static let hostileIDs = [
        quoted, backslashes, lineBreak, unicode, decomposed, dropTable, orTrue, selectOne, wildcards, escapedNUL,
        longestID,
    ]
    /// Users whose ids a broken quoting, a `LIKE` pattern or a comparison of Swift strings would
    /// take for a hostile one.
    static let decoyIDs = ["a", "100Xoff", composed, #"back\\slash\\"#, #"it''s "quoted""#]
    /// The anonymous id of the visitor each hostile user was: their id and ` (anonymous)`, the
    /// longest's another 256 bytes.
    static let anonymousIDs = hostileIDs.map { $0 == longestID ? longestAnonymousID : $0 + " (anonymous)" }

    @Test(arguments: StorageKind.insightStores)
    func hostilePersonIDsAreEachOnePerson(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            var messages: [JSONValue] = []
            // An `open` by each user, 11 hostile and 5 decoys: 16 events of 16 people.
            for (index, user) in (Self.hostileIDs + Self.decoyIDs).enumerated() {
                messages.append(Self.track("open", id: "o\(index)", user: user, at: 60 + Double(index)))
            }
            // An `open` by each hostile user's anonymous id, before signing in: 11 events.
            for (index, anonymous) in Self.anonymousIDs.enumerated() {
                messages.append(Self.track("open", id: "a\(index)", anonymous: anonymous, at: 120 + Double(index)))
            }
            // Each hostile user identifies; the even ones (0, 2, 4, 6, 8, 10: 6 of them) with their
            // anonymous id, which merges it into them.
            for (index, user) in Self.hostileIDs.enumerated() {
                messages.append(
                    Self.identify(
                        id: "i\(index)", user: user,
                        anonymous: index.isMultiple(of: 2) ? Self.anonymousIDs[index] : nil,
                        traits: ["name": .string(user)], at: 180 + Double(index)))
            }
            try await Self.ingest(messages, into: storage)
            let query = CollectorQuery(storage: storage)
            // 27 `open` events (16 + 11); 21 people: the 16 users and the 5 anonymous ids not merged.
            let byDay = try await Self.point(query, ["event": "open"])
            #expect(byDay?.count == 27, "\(kind) by day")
            #expect(byDay?.users == 21, "\(kind) by day")
            let byHour = try await Self.point(query, ["event": "open"], hour: true)
            #expect(byHour?.count == 27, "\(kind) by hour")
            #expect(byHour?.users == 21, "\(kind) by hour")
            let active = try await Self.point(query, ["event": "open", "math": "dau"])
            #expect(active?.active == 21, "\(kind) daily active")
            // `math=users`: the same 21 per interval and over the range, by the day (the daily
            // people) and by the hour (the events: ClickHouse, with the merges sent to it).
            for hour in [false, true] {
                let insight = try Self.parameters(
                    Self.range(hour: hour).merging(["event": "open", "math": "users"]) { $1 }
                ).trends()
                let line = try #require(try await query.trends(source: Self.source, insight).lines(of: "A").first)
                #expect(line.values == [21], "\(kind) users, by the hour: \(hour)")
                #expect(line.aggregate == 21, "\(kind) users, by the hour: \(hour)")
            }
            let retention = try Self.parameters([
                "start": "open", "interval": "day", "periods": "1", "from": Timestamp.format(TestMessages.base),
                "to": Timestamp.format(TestMessages.base.addingTimeInterval(Self.day)),
            ]).retention()
            let cohorts = try await query.retention(
                source: Self.source, retention, now: TestMessages.base.addingTimeInterval(2 * Self.day))
            #expect(cohorts.cohorts.map(\.size) == [21], "\(kind) retention")
            // A funnel of `open` then `open`: each of the 21 people opened once, except that a merged
            // user opened twice (as a visitor, then signed in): 21 did the first step, the 6 merged
            // users both.
            var funnel = try Self.parameters(Self.range().merging(["steps": "open,open"]) { $1 }).funnel()
            funnel.window = 3_600_000
            let steps = try await query.funnel(source: Self.source, funnel).steps
            #expect(steps.map(\.users) == [21, 6], "\(kind) funnel")

            for (index, user) in Self.hostileIDs.enumerated() {
                let label = "\(kind): \(user.debugDescription)"
                let found = try #require(try await query.person(source: Self.source, userId: user), "\(label)")
                #expect(Self.bytes(found.person.userId) == Self.bytes(user), "\(label)")
                #expect(found.person.eventCount == 2, "\(label)")  // the open and the identify
                let merged = index.isMultiple(of: 2) ? [Self.anonymousIDs[index]] : []
                #expect(found.person.anonymousIds.map { Array($0.utf8) } == merged.map { Array($0.utf8) }, "\(label)")
                #expect(Self.bytes(found.person.traits["name"]?.stringValue) == Self.bytes(user), "\(label)")
                // A search for the id finds that user alone: not the decoys, whose ids hold `100Xoff`
                // (a `LIKE` pattern's match for `100%_off`), `it''s` or a composed "é".
                let search = try await query.people(source: Self.source, search: user)
                #expect(search.items.map { Array($0.userId.utf8) } == [Array(user.utf8)], "\(label) search")
            }
            for user in Self.decoyIDs {
                let found = try await query.person(source: Self.source, userId: user)
                #expect(found?.person.eventCount == 1, "\(kind): \(user.debugDescription)")  // the open alone
                #expect(found?.person.anonymousIds == [], "\(kind): \(user.debugDescription)")
            }
            #expect(try await query.person(source: Self.source, userId: "' OR ''='") == nil)
            #expect(try await query.people(source: Self.source, search: "100_").items.isEmpty, "\(kind)")
        }
    }

    // MARK: Cohorts

    @Test(arguments: StorageKind.insightStores)
    func hostileCohortConditionsHoldTheirOwnPeople(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            // Ten users, c1 to c10, each with a `plan` (c10 none) and one `buy`.
            let plans: [String: String] = [
                "c1": Self.orTrue, "c2": "a", "c3": Self.decomposed, "c4": Self.composed, "c5": Self.wildcards,
                "c6": "100Xoff", "c7": Self.quoted, "c8": Self.backslashes, "c9": Self.escapedNUL,
            ]
            let users = (1...10).map { "c\($0)" }
            var messages: [JSONValue] = []
            for (index, user) in users.enumerated() {
                var traits: [String: JSONValue] = ["name": .string(user)]
                traits["plan"] = plans[user].map(JSONValue.string)
                messages.append(Self.identify(id: "i-\(user)", user: user, traits: traits, at: 60 + Double(index)))
                messages.append(Self.track("buy", id: "b-\(user)", user: user, at: 120 + Double(index)))
            }
            // `a' OR '1'='1` done by c1 three times, c2 twice, c3 once; its decoy `a` by c4 five
            // times. `'); DROP TABLE events; --` by c5 once; its prefix by c6.
            var at = 200.0
            for (user, name, times) in [
                ("c1", Self.orTrue, 3), ("c2", Self.orTrue, 2), ("c3", Self.orTrue, 1), ("c4", "a", 5),
                ("c5", Self.dropTable, 1), ("c6", "'); DROP TABLE events", 1),
            ] {
                for number in 0..<times {
                    messages.append(Self.track(name, id: "e-\(user)-\(number)", user: user, at: at))
                    at += 1
                }
            }
            try await Self.ingest(messages, into: storage)
            let clock = ManualClock(start: TestMessages.base.addingTimeInterval(Self.day))
            let query = CollectorQuery(storage: storage, clock: clock)
            let library = SavedLibrary(storage: storage, clock: clock)
            func plan(_ op: PropertyFilter.Operator, _ value: String) -> CohortCondition {
                .trait(PropertyFilter(property: "plan", op: op, value: value))
            }
            let definitions: [(conditions: [CohortCondition], members: Set<String>, why: String)] = [
                ([plan(.equals, Self.orTrue)], ["c1"], "c1's plan; not c2's `a`"),
                ([plan(.equals, Self.decomposed)], ["c3"], "the decomposed é; not c4's composed one"),
                ([plan(.equals, Self.composed)], ["c4"], "the composed é; not c3's decomposed one"),
                ([plan(.contains, "%_")], ["c5"], "100%_off; not 100Xoff"),
                (
                    [plan(.notEquals, Self.orTrue)], Set(users).subtracting(["c1"]),
                    "everyone but c1, c10 (no plan) included"
                ),
                ([plan(.equals, Self.backslashes)], ["c8"], #"back\slash\"#),
                ([plan(.equals, Self.escapedNUL)], ["c9"], "the text \\u0000"),
                ([plan(.equals, Self.quoted)], ["c7"], "it's \"quoted\""),
                ([.performed(event: Self.orTrue, times: 2, days: 30)], ["c1", "c2"], "3 and 2 times; c3 once, c4 `a`"),
                ([.performed(event: Self.dropTable, times: 1, days: 30)], ["c5"], "c5; not c6's prefix"),
                (
                    [.performed(event: Self.orTrue, times: 2, days: 30), plan(.equals, Self.orTrue)], ["c1"],
                    "both: c1"
                ),
            ]
            for (index, definition) in definitions.enumerated() {
                let label = "\(kind): \(definition.conditions) — \(definition.why)"
                let saved = try await library.createCohort(
                    source: Self.source, name: "hostile \(index)", conditions: definition.conditions)
                // Read back as stored.
                let cohort = try #require(try await storage.cohorts(source: Self.source, id: saved.id).first)
                #expect(cohort.conditions == definition.conditions, "\(label)")
                let members = try await query.members(source: Self.source, of: cohort, page: PageRequest(limit: 100))
                #expect(Set(members.page.items.map(\.id)) == definition.members, "\(label)")
                #expect(members.size == definition.members.count, "\(label)")
                // Its people's `buy`s: one each.
                let buys = try await Self.point(query, ["event": "buy", "cohort": "\(cohort.id)"], label)
                #expect(buys?.count == definition.members.count, "\(label)")
                #expect(buys?.users == definition.members.count, "\(label)")
            }
            // The same traits as a trend's filter on people (`person.plan`), which the SQL stores
            // compare in SQL: each value's one buyer; `≠` everyone else (c10 included).
            let filters: [(op: String, value: String, buys: Int)] = [
                ("eq", Self.orTrue, 1), ("eq", "a", 1), ("eq", Self.decomposed, 1), ("eq", Self.composed, 1),
                ("contains", "%_", 1), ("ne", Self.orTrue, 9), ("eq", Self.backslashes, 1), ("eq", Self.escapedNUL, 1),
                ("eq", Self.quoted, 1), ("contains", "a' or", 1), ("eq", Self.dropTable, 0),
            ]
            for (op, value, buys) in filters {
                let found = try await Self.point(
                    query,
                    ["event": "buy", "where.1.property": "person.plan", "where.1.op": op, "where.1.value": value],
                    filters: 1)
                #expect(found?.count == buys, "\(kind): person.plan \(op) \(value.debugDescription)")
            }
        }
    }

    // MARK: Funnels and paths

    @Test(arguments: StorageKind.insightStores)
    func funnelsAndPathsGoThroughHostileNames(kind: StorageKind) async throws {
        let first = Self.orTrue
        let second = Self.commaAndBrackets
        let third = Self.backslashes
        try await withStorage(kind) { storage async throws in
            // f1: all three steps; f2: the first two; f3: the first, then `it's "quoted"` (the
            // second's text up to its comma), then the third; f4: the decoy `a`, then the second
            // and third; f5: the first two, then the decoys `back\slash` and `back\\slash\\`.
            // `label` on f1's to f3's first steps and on the second steps.
            let events: [(String, String, [String: JSONValue])] = [
                ("f1", first, ["label": .string(Self.quoted)]), ("f1", second, ["label": .string(Self.orTrue)]),
                ("f1", third, [:]),
                ("f2", first, ["label": .string(Self.backslashes)]), ("f2", second, ["label": "a"]),
                ("f3", first, ["label": .string(Self.quoted)]), ("f3", #"it's "quoted""#, [:]), ("f3", third, [:]),
                ("f4", "a", [:]), ("f4", second, [:]), ("f4", third, [:]),
                ("f5", first, [:]), ("f5", second, ["label": "A' OR '1'='1"]), ("f5", #"back\slash"#, [:]),
                ("f5", #"back\\slash\\"#, [:]),
            ]
            var messages: [JSONValue] = []
            var step: [String: Double] = [:]
            for (index, (person, name, properties)) in events.enumerated() {
                let minute = step[person, default: 0] + 1
                step[person] = minute
                messages.append(
                    Self.track(name, id: "m\(index)", anonymous: person, at: minute * 60, properties: properties))
            }
            try await Self.ingest(messages, into: storage)
            let query = CollectorQuery(storage: storage)
            var funnel = try Self.parameters(Self.range().merging(["steps": "x,y"]) { $1 }).funnel()
            func users(
                _ steps: [FunnelStep], filters: [PropertyFilter] = [], breakdown: String? = nil
            ) async throws -> FunnelResult {
                funnel.steps = steps
                funnel.filters = filters
                funnel.breakdown = breakdown
                return try await query.funnel(source: Self.source, funnel)
            }
            let plain = [FunnelStep(event: first), FunnelStep(event: second), FunnelStep(event: third)]
            // The first step: f1, f2, f3, f5 (f4 did `a`); the second after it: f1, f2, f5 (f3 did
            // `it's "quoted"`); the third: f1 (f5 did decoys).
            #expect(try await users(plain).steps.map(\.users) == [4, 3, 1], "\(kind)")
            // The second step only with `label` = a' OR '1'='1: f1's (f2's is `a`, f5's `A' OR …`).
            var exact = plain
            exact[1].filters = [PropertyFilter(property: "label", op: .equals, value: Self.orTrue)]
            #expect(try await users(exact).steps.map(\.users) == [4, 1, 1], "\(kind) step =")
            // With `contains` (ASCII case ignored), f5's too.
            var containing = plain
            containing[1].filters = [PropertyFilter(property: "label", op: .contains, value: "a' or '1'='1")]
            #expect(try await users(containing).steps.map(\.users) == [4, 2, 1], "\(kind) step contains")
            // Every step without `label` = a: f2's second step is left out (absent labels pass).
            let notA = try await users(plain, filters: [PropertyFilter(property: "label", op: .notEquals, value: "a")])
            #expect(notA.steps.map(\.users) == [4, 2, 1], "\(kind) where ≠")
            // By the first step's `label`: it's "quoted" f1 and f3 (f1 through), back\slash\ f2, none f5.
            let groups = try await users(plain, breakdown: "label").groups
            var byLabel: [[UInt8]?: [Int]] = [:]
            for group in groups { byLabel[Self.bytes(group.value)] = group.steps.map(\.users) }
            #expect(
                byLabel == [
                    Self.bytes(Self.quoted): [2, 1, 1], Self.bytes(Self.backslashes): [1, 1, 0], nil: [1, 1, 0],
                ],
                "\(kind) breakdown")
            // Names without a comma or brackets go through the `steps` parameter as they are: the
            // first (4), then the third after it (f1, f3).
            let named = try Self.parameters(Self.range().merging(["steps": "\(first),\(third)"]) { $1 }).funnel()
            #expect(named.steps.map { Self.bytes($0.event) } == [Self.bytes(first), Self.bytes(third)])
            #expect(try await query.funnel(source: Self.source, named).steps.map(\.users) == [4, 2], "\(kind)")

            // Paths from the first name: f1, f2, f3, f5. Next: the second (f1, f2, f5) or
            // `it's "quoted"` (f3); after the second, the third (f1) or `back\slash` (f5), f2 stops.
            var paths = try Self.parameters(Self.range().merging(["start": "x"]) { $1 }).paths()
            paths.event = first
            func children(_ node: PathNode) -> [[UInt8]?: Int] {
                Dictionary(node.children.map { (Self.bytes($0.event), $0.people) }) { $0 + $1 }
            }
            let root = try await query.paths(source: Self.source, paths).root
            #expect(root.people == 4, "\(kind) paths")
            #expect(children(root) == [Self.bytes(second): 3, Self.bytes(#"it's "quoted""#): 1], "\(kind) paths")
            let afterSecond = root.children.first { Self.bytes($0.event) == Self.bytes(second) }
            #expect(
                afterSecond.map(children) == [Self.bytes(third): 1, Self.bytes(#"back\slash"#): 1], "\(kind) paths")
            #expect(afterSecond?.ended == 1, "\(kind) paths")  // f2
            // Without the second name: f1 to the third, f3 to `it's "quoted"`, f5 to `back\slash`, f2 nowhere.
            paths.exclude = [second]
            let excluded = try await query.paths(source: Self.source, paths).root
            #expect(
                children(excluded) == [
                    Self.bytes(third): 1, Self.bytes(#"it's "quoted""#): 1, Self.bytes(#"back\slash"#): 1,
                ], "\(kind) paths excluding")
            #expect(excluded.ended == 1, "\(kind) paths excluding")
            // Before the third name: f1, f3, f4; just before it the second (f1, f4) or `it's "quoted"` (f3).
            var before = try Self.parameters(Self.range().merging(["end": "x", "steps": "2"]) { $1 }).paths()
            before.event = third
            let end = try await query.paths(source: Self.source, before).root
            #expect(end.people == 3, "\(kind) paths before")
            #expect(children(end) == [Self.bytes(second): 2, Self.bytes(#"it's "quoted""#): 1], "\(kind) paths before")
        }
    }

    // MARK: NUL

    /// A NUL (`\u0000` in the JSON) in an event's name, a property's name or value, an id or a
    /// trait is refused at ingest, naming where, and the rest of the batch is kept; a query
    /// parameter or a cohort's condition holding one is a 400 naming it; nothing stored breaks a
    /// later query.
    @Test(arguments: StorageKind.insightStores)
    func aNULIsRefusedNamingWhereAndBreaksNothing(kind: StorageKind) async throws {
        try await RouterHarness.run(storage: kind) { client, _ async throws in
            let body = #"""
                {"batch":[
                {"type":"track","event":"bad\u0000name","messageId":"n0","anonymousId":"a","timestamp":"2026-01-01T00:01:00Z"},
                {"type":"track","event":"ok","messageId":"n1","anonymousId":"a","timestamp":"2026-01-01T00:01:00Z","properties":{"k\u0000":1}},
                {"type":"track","event":"ok","messageId":"n2","anonymousId":"a","timestamp":"2026-01-01T00:01:00Z","properties":{"label":"v\u0000"}},
                {"type":"track","event":"ok","messageId":"n3","userId":"u\u0000","timestamp":"2026-01-01T00:01:00Z"},
                {"type":"track","event":"ok","messageId":"n4","anonymousId":"a\u0000","timestamp":"2026-01-01T00:01:00Z"},
                {"type":"identify","messageId":"n5","userId":"u","timestamp":"2026-01-01T00:01:00Z","traits":{"plan":"p\u0000"}},
                {"type":"track","event":"ok","messageId":"n6","anonymousId":"a","timestamp":"2026-01-01T00:01:00Z","properties":{"label":"not\\u0000nul"}},
                {"type":"track","event":"ok","messageId":"n7","anonymousId":"b","timestamp":"2026-01-01T00:02:00Z","properties":{"label":"x"}}
                ]}
                """#
            let response = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: ByteBuffer(string: body)
            )
            #expect(response.status == .ok)
            #expect(try response.json["accepted"] == 2, "\(kind)")  // n6 (a backslash, not a NUL) and n7
            let rejected = try response.json["rejected"]?.arrayValue ?? []
            #expect(rejected.map { $0["index"]?.intValue } == [0, 1, 2, 3, 4, 5])
            #expect(
                rejected.map { $0["path"]?.stringValue } == [
                    "batch[0].event", #"batch[1].properties["k\u0000"]"#, "batch[2].properties.label",
                    "batch[3].userId",
                    "batch[4].anonymousId", "batch[5].traits.plan",
                ], "\(kind)")
            // What was stored answers.
            let range = "from=2026-01-01T00%3A00%3A00Z&to=2026-01-02T00%3A00%3A00Z"
            let trend = try await AnalyticsRouteTests.get(client, "/v1/query/trends?event=ok&\(range)")
            #expect(trend.status == .ok)
            #expect(try trend.json["totals"]?[0]?["count"] == 2, "\(kind)")
            let labelled = try await AnalyticsRouteTests.get(
                client, "/v1/query/trends?event=ok&interval=hour&breakdown=label&\(range)")
            #expect(labelled.status == .ok)
            let events = try await AnalyticsRouteTests.get(client, "/v1/query/events?name=ok")
            #expect(try events.json["items"]?.arrayValue?.count == 2, "\(kind)")
            // A NUL in a query's parameter: a 400 naming it.
            for (uri, path) in [
                ("/v1/query/trends?event=bad%00name&\(range)", "event"),
                ("/v1/query/trends?event=ok&where.1.property=label&where.1.value=v%00&\(range)", "where.1.value"),
                ("/v1/query/trends?event=ok&where.1.property=la%00bel&where.1.value=v&\(range)", "where.1.property"),
                ("/v1/query/trends?event=ok&breakdown=la%00bel&\(range)", "breakdown"),
                ("/v1/query/trends?event=ok&b.event=o%00k&\(range)", "b.event"),
                ("/v1/query/funnel?steps=ok,bad%00name&\(range)", "steps"),
                ("/v1/query/funnel?steps=ok,ok&where=label=v%00&\(range)", "where"),
                ("/v1/query/paths?start=ok&exclude=bad%00name&\(range)", "exclude"),
                ("/v1/query/retention?start=bad%00name", "start"),
                ("/v1/query/users?search=%00", "search"),
            ] {
                let refused = try await AnalyticsRouteTests.get(client, uri)
                #expect(refused.status == .badRequest, "\(kind) \(uri)")
                #expect(try refused.json["code"] == "invalid_parameter", "\(kind) \(uri)")
                #expect(try refused.json["path"] == .string(path), "\(kind) \(uri)")
            }
            // A cohort's condition holding one: refused, naming it, and not saved.
            for (conditions, path) in [
                (#"[{"trait":"plan","value":"p\u0000"}]"#, "conditions[0].value"),
                (#"[{"event":"bad\u0000name"}]"#, "conditions[0].event"),
            ] {
                let refused = try await client.execute(
                    uri: "/v1/cohorts", method: .post, headers: .bearer(RouterHarness.adminToken),
                    body: ByteBuffer(string: #"{"name":"C","conditions":\#(conditions)}"#))
                #expect(refused.status == .badRequest, "\(kind) \(conditions)")
                #expect(try refused.json["path"] == .string(path), "\(kind) \(conditions)")
            }
            let cohorts = try await AnalyticsRouteTests.get(client, "/v1/cohorts")
            #expect(try cohorts.json["items"]?.arrayValue?.isEmpty == true)
        }
    }
}
