import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// The events per name and minute (``EventMinutes``) equal a count of the stored events grouped
/// the same way, after ingest with resends and late events, a user's deletion, retention and
/// PostgreSQL's folds, and after the backfill of the events stored before schema 23; and a trend
/// whose range begins and ends within minutes counts what the events say.
struct EventMinutesTests {
    typealias Counts = [EventMinutes.Key: Int64]

    /// The stored named events counted per source, name and minute of their time.
    static func counted(_ storage: SQLCollectorStorage) async throws -> Counts {
        var counts: Counts = [:]
        let rows = try await storage.backend.query(
            "SELECT source, event, timestamp FROM events WHERE event IS NOT NULL", [])
        for row in rows {
            let source = try #require(row[0].text)
            let event = try #require(row[1].text)
            let timestamp = try #require(row[2].int)
            counts[
                EventMinutes.Key(source: source, event: event, minute: EventMinutes.minute(of: timestamp)), default: 0] +=
                1
        }
        return counts
    }

    /// What `event_minutes` holds per key (PostgreSQL's rows of a key summed).
    static func kept(_ storage: SQLCollectorStorage) async throws -> Counts {
        var counts: Counts = [:]
        let rows = try await storage.backend.query("SELECT source, event, minute, events FROM event_minutes", [])
        for row in rows {
            let key = EventMinutes.Key(
                source: try #require(row[0].text), event: try #require(row[1].text), minute: try #require(row[2].int))
            counts[key, default: 0] += try #require(row[3].int)
        }
        return counts.filter { $0.value != 0 }
    }

    static func expectKept(_ storage: SQLCollectorStorage, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let counted = try await counted(storage)
        #expect(!counted.isEmpty, sourceLocation: sourceLocation)
        #expect(try await kept(storage) == counted, sourceLocation: sourceLocation)
    }

    /// Messages over three hours, a few per minute at uneven milliseconds: tracks of three names,
    /// named and unnamed pages, identifies; every seventh an hour late.
    static func messages(prefix: String, count: Int) -> [IngestMessage] {
        (0..<count).map { index in
            let late = index % 7 == 3
            let offset = Double(index) * 23.917 - (late ? 3600 : 0)
            let user = index % 5 == 0 ? "u\(index % 3)" : nil
            let anonymous = "a\(index % 11)"
            switch index % 9 {
            case 0:
                var message = TestMessages.ingest(
                    "", id: "\(prefix)-\(index)", type: .identify, user: user ?? "u1", anonymous: anonymous, at: offset)
                message.name = nil
                return message
            case 1:
                return TestMessages.ingest(
                    "Pricing", id: "\(prefix)-\(index)", type: .page, user: user, anonymous: anonymous, at: offset)
            case 2:
                var message = TestMessages.ingest(
                    "", id: "\(prefix)-\(index)", type: .page, user: user, anonymous: anonymous, at: offset)
                message.name = nil
                return message
            default:
                let name = ["open", "buy", "view"][index % 3]
                return TestMessages.ingest(name, id: "\(prefix)-\(index)", user: user, anonymous: anonymous, at: offset)
            }
        }
    }

    @Test(arguments: StorageKind.available)
    func theMinutesAreWhatTheStoredEventsHold(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let messages = Self.messages(prefix: "m", count: 600)
            for start in stride(from: 0, to: messages.count, by: 97) {
                let part = Array(messages[start..<min(start + 97, messages.count)])
                #expect(try await storage.insert(part, source: "default").allSatisfy { $0 })
            }
            #expect(try await storage.insert(Array(messages.prefix(50)), source: "web").allSatisfy { $0 })
            // Batches through the decoder too, and resends that store nothing.
            let base = Timestamp.milliseconds(TestMessages.base)
            for (index, body) in DefinitionsTests.bodies(seed: 11).enumerated() {
                let decoded = try DefinitionsTests.decoded(
                    body, receivedAt: base + Int64(index) * 61_700, streaming: index % 2 == 0)
                #expect(try await storage.insert(decoded, source: "default").allSatisfy { $0 })
            }
            #expect(try await storage.insert(messages.shuffled(), source: "default").allSatisfy { !$0 })
            try await Self.expectKept(storage)
            let before = try await Self.kept(storage)

            // A user's data deleted: its events leave their minutes, some of which empty.
            let deletion = StoredDeletion(
                id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
            let deleted = try await storage.deleteUserData(
                deletion, userIds: ["u1"], anonymousIds: ["a3", "a4"], suppress: [])
            #expect(deleted.events > 0)
            try await Self.expectKept(storage)
            let after = try await Self.kept(storage)
            #expect(after.values.reduce(0, +) < before.values.reduce(0, +))
            #expect(after.count < before.count)

            // Retention of the first half hour of arrivals, in small batches.
            let minute = (base + 1_800_000) / 60_000
            var removed = 0
            while case let gone = try await storage.deleteEvents(source: "default", beforeMinute: minute, limit: 31),
                gone > 0
            {
                removed += gone
            }
            #expect(removed > 0)
            try await Self.expectKept(storage)

            // PostgreSQL's writes each add rows of their own: folded, a row per key, the same sums.
            if kind == .postgres {
                let kept = try await Self.kept(storage)
                try await EventMinutes.fold(Array(kept.keys), in: storage.backend)
                let rows = try await storage.backend.query(
                    "SELECT COUNT(*), COUNT(DISTINCT (source, event, minute)) FROM event_minutes", [])
                #expect(rows.first?[0].int == rows.first?[1].int)
                #expect(rows.first?[0].int == Int64(kept.count))
                try await Self.expectKept(storage)
            }
        }
    }

    /// A PostgreSQL fold that fails (here: its table is away) keeps the keys it did not fold, and
    /// the next fold leaves one row per key, for the minutes and for the daily people alike.
    @Test(arguments: StorageKind.available.filter { $0 == .postgres })
    func aFailedFoldKeepsItsKeysForTheNext(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let writer = try #require(storage.writer as? PostgresEventWriter)
            /// The rows of `table` and its keys (the columns `key`) among the rows that meet `condition`.
            func rowsAndKeys(_ table: String, _ key: String, where condition: String = "TRUE") async throws
                -> (rows: Int64, keys: Int64)
            {
                let row = try #require(
                    try await storage.backend.query(
                        "SELECT COUNT(*), COUNT(DISTINCT (\(key))) FROM \(table) WHERE \(condition)", []
                    ).first)
                return (try #require(row[0].int), try #require(row[1].int))
            }
            // Two writes at the same times, the second by other people: each minute and day
            // written gets a row from each.
            let first = Self.messages(prefix: "f", count: 240)
            for part in [first, first.map { Self.renamed($0, "g") }] {
                #expect(try await storage.insert(part, source: "default").allSatisfy { $0 })
            }
            let folds: [(table: String, key: String, fold: () async throws -> Void)] = [
                ("event_minutes", "source, event, minute", { try await writer.foldEventMinutes() }),
                ("daily_people", "source, event, day, chunk", { try await writer.foldDailyPeople() }),
            ]
            for (table, key, fold) in folds {
                let before = try await rowsAndKeys(table, key)
                #expect(before.rows > before.keys, "\(table) has keys of several rows")
                _ = try await storage.backend.query("ALTER TABLE \(table) RENAME TO \(table)_away", [])
                await #expect(throws: (any Error).self) { try await fold() }
                _ = try await storage.backend.query("ALTER TABLE \(table)_away RENAME TO \(table)", [])
                try await fold()
                let after = try await rowsAndKeys(table, key)
                #expect(after.rows == after.keys, "\(table) holds a row per key after the next fold")
                #expect(after.keys == before.keys)
            }
            try await Self.expectKept(storage)

            // A day whose fold always fails (a row that is not a chunk of people) holds up no other
            // day: those are folded, and it is kept for the next fold.
            #expect(try await storage.insert(first.map { Self.renamed($0, "h") }, source: "a").allSatisfy { $0 })
            #expect(try await storage.insert(first.map { Self.renamed($0, "i") }, source: "default").allSatisfy { $0 })
            let bad = try #require(
                try await storage.backend.query(
                    "SELECT source, event, day, chunk FROM daily_people WHERE source = 'a' ORDER BY event, day LIMIT 1",
                    []
                ).first)
            _ = try await storage.backend.query(
                "INSERT INTO daily_people (source, event, day, chunk, bits) VALUES ($1, $2, $3, $4, $5)",
                [bad[0], bad[1], bad[2], bad[3], .bytes([])])
            let key = "source, event, day, chunk"
            let several = try await rowsAndKeys("daily_people", key, where: "source = 'default'")
            #expect(several.rows > several.keys)
            for _ in 0..<2 {
                await #expect(throws: (any Error).self) { try await writer.foldDailyPeople() }
                let folded = try await rowsAndKeys("daily_people", key, where: "source = 'default'")
                #expect(folded.rows == folded.keys, "the other days are folded")
            }
        }
    }

    /// `message` under another id, by other people (anonymous ones).
    static func renamed(_ message: IngestMessage, _ prefix: String) -> IngestMessage {
        var message = message
        message.messageId = prefix + message.messageId
        message.userId = nil
        message.anonymousId = prefix + (message.anonymousId ?? "")
        return message
    }

    /// The events of `event` and `source` in `from ..< to` per interval of `calendar`, counted here.
    static func expected(
        _ messages: [IngestMessage], event: String, from: Int64, to: Int64, interval: AnalyticsInterval,
        calendar: SourceCalendar = .utc
    ) -> [Int64: Int] {
        var counts: [Int64: Int] = [:]
        for message in messages where message.name == event && message.timestamp >= from && message.timestamp < to {
            counts[calendar.index(of: message.timestamp, interval), default: 0] += 1
        }
        return counts
    }

    /// The names with the most events in `from ..< to`, counted here, most first (ties by name).
    static func expectedTop(_ messages: [IngestMessage], from: Int64, to: Int64, limit: Int) -> [String] {
        var counts: [String: Int] = [:]
        for message in messages where message.timestamp >= from && message.timestamp < to {
            if let name = message.name { counts[name, default: 0] += 1 }
        }
        return counts.sorted {
            $0.value != $1.value ? $0.value > $1.value : $0.key.utf8.lexicographicallyPrecedes($1.key.utf8)
        }
        .prefix(limit).map { "\($0.key) \($0.value)" }
    }

    static func top(_ storage: SQLCollectorStorage, from: Int64, to: Int64?, limit: Int) async throws -> [String] {
        let range = TimeRange(from: Timestamp.date(milliseconds: from), to: to.map(Timestamp.date(milliseconds:)))
        return try await storage.topEvents(source: "default", range: range, limit: limit).map {
            "\($0.name) \($0.count)"
        }
    }

    /// In UTC and in zones whose hours and days begin at a half or three quarters of an hour
    /// (St. John's, −03:30, whose midnight falls among the events; Kathmandu, +05:45).
    @Test(arguments: StorageKind.available)
    func aTrendWhoseRangeCutsMinutesCountsTheirEvents(kind: StorageKind) async throws {
        let calendars = [
            SourceCalendar.utc, try #require(SourceCalendar(identifier: "America/St_Johns")),
            try #require(SourceCalendar(identifier: "Asia/Kathmandu")),
        ]
        try await withStorage(kind) { storage async throws in
            let messages = Self.messages(prefix: "t", count: 640)
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            let base = Timestamp.milliseconds(TestMessages.base)
            // Ranges that begin and end on events, inside their minutes (both edges exact).
            let opens = messages.filter { $0.name == "open" }.map(\.timestamp).sorted()
            #expect(opens.count > 50 && opens.allSatisfy { $0 % 60_000 != 0 })
            let ranges: [(Int64, Int64)] = [
                (base - 3_600_000, base + 4 * 3_600_000),  // whole minutes
                (opens[2], opens[40]),  // parts of a minute at both ends
                (opens[2] + 1, opens[40] + 1),
                (opens[7] - 1, opens[7] + 1),  // within one minute
                (opens[7] / 60_000 * 60_000, opens[7] + 60_000),  // a whole minute, then a part
            ]
            for (from, to) in ranges {
                for calendar in calendars {
                    for interval in [AnalyticsInterval.hour, .day, .week] {
                        let query = TrendQuery(
                            event: "open", interval: interval,
                            range: AnalyticsRange(from: from, to: to, calendar: calendar))
                        let totals = try await storage.insights.trendCounts(source: "default", query: query)
                        let counts = totals.compactMapValues { $0.count == 0 ? nil : $0.count }
                        let expected = Self.expected(
                            messages, event: "open", from: from, to: to, interval: interval, calendar: calendar)
                        #expect(
                            counts == expected,
                            "\(from - base) ..< \(to - base) by \(interval) in \(calendar.identifier)")
                    }
                }
                // The top events of the same range (the dashboard's overview).
                for limit in [2, 10] {
                    let expected = Self.expectedTop(messages, from: from, to: to, limit: limit)
                    #expect(try await Self.top(storage, from: from, to: to, limit: limit) == expected)
                }
            }
            #expect(
                try await Self.top(storage, from: opens[3], to: nil, limit: 10)
                    == Self.expectedTop(messages, from: opens[3], to: .max, limit: 10))
            #expect(Self.expectedTop(messages, from: opens[2], to: opens[40], limit: 10).count >= 3)
        }
    }

    @Test(arguments: StorageKind.available)
    func theEventsStoredBeforeTheUpgradeAreCountedInTheBackground(kind: StorageKind) async throws {
        let old = Self.messages(prefix: "old", count: 300)
        try await OlderSchemas.upgrade(kind, from: 22) { backend in
            try await OlderSchemas.store(old, source: "default", in: backend)
        } opened: { storage in
            #expect(try await !storage.eventMinutesComplete())
            let base = Timestamp.milliseconds(TestMessages.base)
            let whole = AnalyticsRange(from: base - 7_200_000, to: base + 7_200_000)
            let query = TrendQuery(event: "open", interval: .hour, range: whole)
            // Until the backfill is done, a trend counts from the index.
            let new = Self.messages(prefix: "new", count: 120)
            #expect(try await storage.insert(new, source: "default").allSatisfy { $0 })
            let all = old + new
            let expected = Self.expected(all, event: "open", from: whole.from, to: whole.to, interval: .hour)
            #expect(
                try await storage.insights.trendCounts(source: "default", query: query).compactMapValues {
                    $0.count == 0 ? nil : $0.count
                } == expected)
            let cut = (new[5].timestamp, new[90].timestamp)
            #expect(
                try await Self.top(storage, from: cut.0, to: cut.1, limit: 10)
                    == Self.expectedTop(all, from: cut.0, to: cut.1, limit: 10))
            // A deletion of old and new events before the backfill gets to them.
            let deletion = StoredDeletion(
                id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
            let deleted = try await storage.deleteUserData(
                deletion, userIds: ["u2"], anonymousIds: ["a5"], suppress: [])
            #expect(deleted.events > 0)
            var batches = 0
            while !(try await storage.backfillEventMinutes(limit: 41).isComplete) { batches += 1 }
            #expect(batches >= old.count / 41 - 1)
            #expect(try await storage.eventMinutesComplete())
            try await Self.expectKept(storage)
            // Once complete, a batch does nothing, and the trend reads the minutes.
            #expect(try await storage.backfillEventMinutes(limit: 41).isComplete)
            try await Self.expectKept(storage)
            let kept = try await storage.backend.query("SELECT message_id FROM events", []).compactMap { $0[0].text }
            let stored = all.filter { Set(kept).contains($0.messageId) }
            #expect(
                try await Self.top(storage, from: cut.0, to: cut.1, limit: 10)
                    == Self.expectedTop(stored, from: cut.0, to: cut.1, limit: 10))
            let left = try await Self.counted(storage).filter { $0.key.event == "open" }.values.reduce(0, +)
            let answer = try await storage.insights.trendCounts(source: "default", query: query)
            #expect(Int64(answer.values.reduce(0) { $0 + $1.count }) == left)
        }
    }

    /// SQLite gives the seq of a deleted newest event to the next one: an event stored on a seq
    /// the backfills (of the minutes and of the definitions) have yet to reach is counted once, by
    /// them.
    @Test(arguments: StorageKind.available)
    func anEventOnTheSeqOfADeletedOneBeforeTheBackfillIsCountedOnce(kind: StorageKind) async throws {
        // No pages: the definitions' count here reads a page's name from `name`, where these keep it in `event`.
        var old = Self.messages(prefix: "old", count: 60).filter { $0.type != .page }
        old += (0..<3).map {
            TestMessages.ingest("open", id: "last-\($0)", user: "gone", anonymous: "gone", at: 7_000 + Double($0))
        }
        try await OlderSchemas.upgrade(kind, from: 20) { backend in
            try await OlderSchemas.store(old, source: "default", in: backend)
        } opened: { storage in
            let newest = try await storage.backend.query("SELECT MAX(seq) FROM events", []).first?[0].int
            let deletion = StoredDeletion(
                id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
            let deleted = try await storage.deleteUserData(
                deletion, userIds: ["gone"], anonymousIds: ["gone"], suppress: [])
            #expect(deleted.events == 3)
            let new = [
                TestMessages.ingest("open", id: "new-1", user: "u9", anonymous: "a9", at: 9_000),
                TestMessages.ingest("buy", id: "new-2", user: "u9", anonymous: "a9", at: 9_001),
            ]
            #expect(try await storage.insert(new, source: "default").allSatisfy { $0 })
            let seq = try await storage.backend.query("SELECT MIN(seq) FROM events WHERE message_id LIKE 'new-%'", [])
                .first?[0].int
            if kind == .sqlite { #expect(try #require(seq) <= (try #require(newest))) }
            while !(try await storage.backfillEventMinutes(limit: 7).isComplete) {}
            try await Self.expectKept(storage)
            // The definitions' backfill (schema 21) likewise.
            while !(try await storage.backfillDefinitions(limit: 7).isComplete) {}
            try await DefinitionsTests.expectKept(storage, sources: ["default"], times: false)
        }
    }

    /// Minute 0 holds the last minute before 1970 too: the top events from the epoch on count
    /// none of it.
    @Test(arguments: StorageKind.available)
    func theTopEventsFromTheEpochCountNoEarlierEvent(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            var before = TestMessages.ingest("early", id: "e1")
            before.timestamp = -30_000
            var after = TestMessages.ingest("early", id: "e2")
            after.timestamp = 30_000
            var later = TestMessages.ingest("early", id: "e3")
            later.timestamp = 90_000
            #expect(try await storage.insert([before, after, later], source: "default").allSatisfy { $0 })
            #expect(try await storage.eventMinutesComplete())
            for (from, to, count) in [
                (0, 600_000, 2), (-60_000, 600_000, 3), (1, 60_000, 1), (-1, 120_000, 2), (-30_000, 60_000, 2),
                // These read whole minutes from the table, and the part of one from the index.
                (60_000, 600_000, 1), (30_000, 600_000, 2),
            ] {
                let range = TimeRange(
                    from: Timestamp.date(milliseconds: Int64(from)), to: Timestamp.date(milliseconds: Int64(to)))
                let top = try await storage.topEvents(source: "default", range: range, limit: 10)
                #expect(top.map(\.count) == [count], "\(from) ..< \(to)")
            }
        }
    }

    /// The top events seek each name's minutes of the range in `event_minutes`' key, rather than
    /// read every minute the source has kept.
    @Test func theTopEventsSeekEachNamesMinutes() async throws {
        try await withStorage(.sqlite) { storage async throws in
            let backend = try #require(storage.backend as? SQLiteBackend)
            let messages = Self.messages(prefix: "p", count: 90)
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            #expect(try await storage.eventMinutesComplete())
            backend.statementLog.withLock { $0 = [] }
            let range = TimeRange(
                from: TestMessages.base.addingTimeInterval(-600.5), to: TestMessages.base.addingTimeInterval(1_800.5))
            #expect(try await storage.topEvents(source: "default", range: range, limit: 3).count == 3)
            let statements = backend.statementLog.withLock { log in
                defer { log = nil }
                return log ?? []
            }
            let read = try #require(statements.first { $0.sql.contains("FROM event_minutes") })
            let plan = try await backend.query("EXPLAIN QUERY PLAN " + read.sql, read.binds)
                .compactMap { $0.last?.text }.joined(separator: "\n")
            #expect(plan.contains("event=?") && plan.contains("minute>"), "\(plan)")
        }
    }
}
