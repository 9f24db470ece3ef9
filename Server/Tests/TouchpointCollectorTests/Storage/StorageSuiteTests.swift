import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// One suite, run against SQLite and (when configured) PostgreSQL.
struct StorageSuiteTests {
    /// Sessions whose last events fall on both sides of minute boundaries, some at the same
    /// millisecond: listed newest first (then by id) page after page, filtered by a range that
    /// starts inside a minute, counted as active since inside a minute, and deleted by retention
    /// before a time inside a minute, each exactly as their last events' times say.
    @Test(arguments: StorageKind.available)
    func recentSessionsAroundMinuteBoundaries(kind: StorageKind) async throws {
        let base = Timestamp.milliseconds(TestMessages.base)
        // Seconds from the base to the start of a minute.
        let boundary = Double((base / 60_000 + 2) * 60_000 - base) / 1000
        // Last events (seconds from the boundary) of 14 sessions; written in two writes, the
        // second moving some of them across the boundary or a minute further.
        let first: [Double] = [-59.9, -30, -0.001, -0.001, 0, 0, 0.5, 12, 59.999, 60, -45, -1, 30, 90]
        let second: [Int: Double] = [10: 0.002, 11: 60.5, 12: 31, 13: 89]  // 13: earlier, no change
        var last: [String: Int64] = [:]
        func id(_ n: Int) -> String { "s" + String(n + 10) }
        var firstWrite: [IngestMessage] = []
        for (n, seconds) in first.enumerated() {
            firstWrite.append(TestMessages.ingest("e", id: "a\(n)", session: id(n), at: boundary + seconds))
            last[id(n)] = Timestamp.milliseconds(TestMessages.base.addingTimeInterval(boundary + seconds))
        }
        var secondWrite: [IngestMessage] = []
        for (n, seconds) in second.sorted(by: { $0.key < $1.key }) {
            secondWrite.append(TestMessages.ingest("e", id: "b\(n)", session: id(n), at: boundary + seconds))
            last[id(n)] = max(
                last[id(n)] ?? 0, Timestamp.milliseconds(TestMessages.base.addingTimeInterval(boundary + seconds)))
        }
        let newestFirst = last.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key > $1.key }.map(\.key)

        func expectListsCountsAndRetention(_ storage: SQLCollectorStorage) async throws {
            func listed(_ filter: SessionFilter) async throws -> [String] {
                var ids: [String] = []
                var cursor: String?
                repeat {
                    let page = try await storage.sessions(
                        source: "default", filter: filter, page: PageRequest(limit: 3, cursor: cursor))
                    ids += page.items.map(\.sessionId)
                    cursor = page.nextCursor
                } while cursor != nil
                return ids
            }
            #expect(try await listed(SessionFilter()) == newestFirst)
            // Ranges and cutoffs inside a minute, at a last event and next to one.
            for seconds in [-30.0, -0.001, 0.0005, 30.5, 60] {
                let from = TestMessages.base.addingTimeInterval(boundary + seconds)
                let since = Timestamp.milliseconds(from)
                let active = newestFirst.filter { (last[$0] ?? 0) >= since }
                #expect(try await listed(SessionFilter(range: TimeRange(from: from))) == active, "from \(seconds)")
                #expect(
                    try await storage.activeSessionCount(source: "default", since: from) == active.count,
                    "since \(seconds)")
            }
            let cutoff = Timestamp.milliseconds(TestMessages.base.addingTimeInterval(boundary + 0.25))
            let expired = newestFirst.filter { (last[$0] ?? 0) < cutoff }
            #expect(
                try await storage.deleteSessions(source: "default", lastBefore: cutoff, limit: 100) == expired.count)
            #expect(try await listed(SessionFilter()) == newestFirst.filter { !expired.contains($0) })
        }

        try await withStorage(kind) { storage async throws in
            #expect(try await storage.insert(firstWrite, source: "default").allSatisfy { $0 })
            #expect(try await storage.insert(secondWrite, source: "default").allSatisfy { $0 })
            try await expectListsCountsAndRetention(storage)
        }
        // The same sessions as schema 17 kept them, upgraded (SQLite: their minutes filled in).
        try await OlderSchemas.upgrade(kind, from: 17) { backend async throws in
            try await OlderSchemas.store(firstWrite + secondWrite, source: "default", in: backend)
            #expect(try await SchemaMigrations.migrate(backend) == SchemaMigrations.versions(from: 18))
        } opened: { storage async throws in
            try await expectListsCountsAndRetention(storage)
        }
    }

    @Test(arguments: StorageKind.available)
    func storesNewMessagesAndReportsDuplicates(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let first = [TestMessages.ingest("a", id: "m1"), TestMessages.ingest("b", id: "m2")]
            #expect(try await storage.insert(first, source: "default") == [true, true])
            // m2 again, m3 new, m3 twice in the same request: only the first copy counts.
            let second = [
                TestMessages.ingest("b", id: "m2"), TestMessages.ingest("c", id: "m3"),
                TestMessages.ingest("c", id: "m3"),
            ]
            #expect(try await storage.insert(second, source: "default") == [false, true, false])
            #expect(try await storage.counts(source: "default") == StorageCounts(events: 3, sessions: 1))
        }
    }

    @Test(arguments: StorageKind.available)
    func deduplicatesPerSource(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let message = TestMessages.ingest("a", id: "same")
            #expect(try await storage.insert([message], source: "app-one") == [true])
            #expect(try await storage.insert([message], source: "app-two") == [true])
            #expect(try await storage.insert([message], source: "app-one") == [false])
            #expect(try await storage.counts(source: "app-one").events == 1)
            #expect(try await storage.counts(source: "app-two").events == 1)
        }
    }

    @Test(arguments: StorageKind.available)
    func concurrentWritersOfOneBatchStoreItOnce(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let batch = (0..<200).map {
                TestMessages.ingest("e", id: "m-\($0)", session: "s-\($0 % 7)", at: Double($0))
            }
            let results = try await withThrowingTaskGroup(of: [Bool].self) { group in
                for _ in 0..<6 { group.addTask { try await storage.insert(batch, source: "default") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let storedPerEvent = (0..<200).map { index in results.filter { $0[index] }.count }
            #expect(storedPerEvent.allSatisfy { $0 == 1 })
            #expect(try await storage.counts(source: "default") == StorageCounts(events: 200, sessions: 7))
            let sessions = try await storage.sessions(source: "default", user: nil, page: PageRequest(limit: 10))
            #expect(sessions.items.map(\.eventCount).reduce(0, +) == 200)
        }
    }

    @Test(arguments: StorageKind.available)
    func overlappingConcurrentRequestsEachLearnWhatTheyStored(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            // Request r carries ids r*10 ..< r*10+30: each id is in up to three requests.
            let requests = (0..<10).map { request in
                (request * 10..<request * 10 + 30).map {
                    TestMessages.ingest("e", id: "id-\($0)", session: "s\(request)")
                }
            }
            let results = try await withThrowingTaskGroup(of: ([IngestMessage], [Bool]).self) { group in
                for messages in requests {
                    group.addTask { (messages, try await storage.insert(messages, source: "default")) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            var storedBy: [String: Int] = [:]
            for (messages, flags) in results {
                #expect(messages.count == flags.count)
                for (message, stored) in zip(messages, flags) where stored {
                    storedBy[message.messageId, default: 0] += 1
                }
            }
            #expect(storedBy.count == 120)
            #expect(storedBy.values.allSatisfy { $0 == 1 })
            #expect(try await storage.counts(source: "default").events == 120)
        }
    }

    @Test(arguments: StorageKind.available)
    func derivesSessionsAndUsers(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            _ = try await storage.insert(
                [
                    TestMessages.ingest("open", session: "s1", user: nil, anonymous: "anon-1", at: 10),
                    TestMessages.ingest("login", session: "s1", user: "u1", anonymous: "anon-1", at: 20),
                    TestMessages.ingest("open", session: "s2", user: "u1", anonymous: "anon-1", at: 100),
                    TestMessages.ingest("open", session: "s3", user: "u2", anonymous: "anon-2", at: 50),
                    TestMessages.ingest("orphan", session: nil, user: "u1", at: 5),
                ], source: "default")
            // A later request for s1 extends it.
            _ = try await storage.insert(
                [TestMessages.ingest("tap", session: "s1", user: nil, anonymous: "anon-1", at: 30)], source: "default")

            let byUser = try await storage.sessions(source: "default", user: .userId("u1"), page: PageRequest())
            #expect(byUser.items.map(\.sessionId) == ["s2", "s1"])
            let s1 = try #require(byUser.items.last)
            #expect(s1.eventCount == 3)
            #expect(s1.anonymousId == "anon-1")
            #expect(s1.firstTimestamp == TestMessages.base.addingTimeInterval(10))
            #expect(s1.lastTimestamp == TestMessages.base.addingTimeInterval(30))

            let byAnonymous = try await storage.sessions(
                source: "default", user: .anonymousId("anon-2"), page: PageRequest())
            #expect(byAnonymous.items.map(\.sessionId) == ["s3"])
        }
    }

    /// Within one write, both databases take a session's ids in arrival order (the sender's log
    /// order), not by the events' clocks: the last user id sent, the first anonymous id.
    @Test(arguments: StorageKind.available)
    func sessionIdsFollowArrivalOrder(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            _ = try await storage.insert(
                [
                    TestMessages.ingest("a", session: "s", user: nil, anonymous: "anon-late-clock", at: 40),
                    TestMessages.ingest("b", session: "s", user: "u-early-clock", anonymous: "anon-x", at: 30),
                    TestMessages.ingest("c", session: "s", user: "u-sent-last", anonymous: "anon-y", at: 10),
                    TestMessages.ingest("d", session: "s", user: nil, anonymous: "anon-z", at: 20),
                ], source: "default")
            var session = try #require(
                try await storage.sessions(source: "default", user: nil, page: PageRequest()).items.first)
            #expect(session.userId == "u-sent-last")
            #expect(session.anonymousId == "anon-late-clock")
            #expect(session.eventCount == 4)
            #expect(session.firstTimestamp == TestMessages.base.addingTimeInterval(10))
            #expect(session.lastTimestamp == TestMessages.base.addingTimeInterval(40))

            // A later write: its user id replaces the stored one; the stored anonymous id stays.
            _ = try await storage.insert(
                [TestMessages.ingest("e", session: "s", user: "u-next-write", anonymous: "anon-next", at: 5)],
                source: "default")
            session = try #require(
                try await storage.sessions(source: "default", user: nil, page: PageRequest()).items.first)
            #expect(session.userId == "u-next-write")
            #expect(session.anonymousId == "anon-late-clock")
            #expect(session.eventCount == 5)
            #expect(session.firstTimestamp == TestMessages.base.addingTimeInterval(5))
        }
    }

    @Test(arguments: StorageKind.available)
    func pagesThroughSessionsAndEvents(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            // Equal timestamps in the middle; a session lists its events in arrival order.
            let messages = (0..<25).map { index in
                TestMessages.ingest("step-\(index)", id: "id-\(index)", session: "s", at: Double(index / 2))
            }
            _ = try await storage.insert(messages, source: "default")
            let (events, pages) = try await allPages(maximumPages: 10) { cursor in
                try await storage.sessionEvents(
                    source: "default", sessionId: "s", page: PageRequest(limit: 7, cursor: cursor))
            }
            let names = events.compactMap(\.name)
            #expect(pages == 4)
            #expect(Set(names) == Set((0..<25).map { "step-\($0)" }))
            #expect(names == (0..<25).map { "step-\($0)" })
            // Arrival order, not corrected time: a later request whose skew-corrected time is
            // earlier still comes after what was received before it.
            _ = try await storage.insert(
                [TestMessages.ingest("late", id: "id-late", session: "s", at: 0)], source: "default")
            let arrival = try await storage.sessionEvents(
                source: "default", sessionId: "s", page: PageRequest(limit: 100)
            )
            .items.compactMap(\.name)
            #expect(arrival == (0..<25).map { "step-\($0)" } + ["late"])

            for index in 0..<5 {
                _ = try await storage.insert(
                    [TestMessages.ingest("x", session: "other-\(index)", at: Double(1000 + index))], source: "default")
            }
            let first = try await storage.sessions(source: "default", user: nil, page: PageRequest(limit: 4))
            let second = try await storage.sessions(
                source: "default", user: nil, page: PageRequest(limit: 4, cursor: first.nextCursor))
            #expect(first.items.map(\.sessionId) == ["other-4", "other-3", "other-2", "other-1"])
            #expect(second.items.map(\.sessionId) == ["other-0", "s"])
            #expect(second.nextCursor == nil)
        }
    }

    @Test(arguments: StorageKind.available)
    func filtersEventsByNameAndTimeRange(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            _ = try await storage.insert(
                (0..<10).map { TestMessages.ingest($0.isMultiple(of: 2) ? "even" : "odd", at: Double($0 * 60)) },
                source: "default")
            let range = TimeRange(
                from: TestMessages.base.addingTimeInterval(120), to: TestMessages.base.addingTimeInterval(480))
            let page = try await storage.events(
                source: "default", filter: EventFilter(name: "even", range: range), page: PageRequest())
            #expect(
                page.items.map(\.timestamp)
                    == [120, 240, 360].map { TestMessages.base.addingTimeInterval(Double($0)) })
            let all = try await storage.events(source: "default", filter: EventFilter(), page: PageRequest())
            #expect(all.items.count == 10)
            let event = try #require(all.items.first)
            #expect(event.message["messageId"]?.stringValue == event.messageId)
            #expect(event.sessionId == "session-1")
        }
    }

    /// Events are listed by the minute of their time and, within a minute, in arrival order; a
    /// time range is exact to the millisecond; paging gives the same sequence.
    @Test(arguments: StorageKind.available)
    func listsEventsByMinuteThenArrival(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            _ = try await storage.insert(
                [
                    TestMessages.ingest("e1", at: 70), TestMessages.ingest("e2", at: 10),
                    TestMessages.ingest("e3", at: 50),
                ], source: "default")
            _ = try await storage.insert(
                [TestMessages.ingest("e4", at: 5), TestMessages.ingest("e5", at: 119.999)], source: "default")
            let listed = try await allPages(maximumPages: 5) { cursor in
                try await storage.events(
                    source: "default", filter: EventFilter(), page: PageRequest(limit: 2, cursor: cursor))
            }
            #expect(listed.items.compactMap(\.name) == ["e2", "e3", "e4", "e1", "e5"])

            func namesIn(from: TimeInterval, to: TimeInterval) async throws -> [String] {
                let range = TimeRange(
                    from: TestMessages.base.addingTimeInterval(from), to: TestMessages.base.addingTimeInterval(to))
                return try await storage.events(
                    source: "default", filter: EventFilter(range: range), page: PageRequest()
                ).items.compactMap(\.name)
            }
            #expect(try await namesIn(from: 10, to: 70) == ["e2", "e3"])
            #expect(try await namesIn(from: 0, to: 60) == ["e2", "e3", "e4"])
            #expect(try await namesIn(from: 60, to: 119.999) == ["e1"])
            #expect(try await namesIn(from: 70, to: 120) == ["e1", "e5"])
            let perMinute = try await storage.eventsPerMinute(
                source: "default",
                range: TimeRange(
                    from: TestMessages.base.addingTimeInterval(5.001), to: TestMessages.base.addingTimeInterval(120)))
            #expect(perMinute.map(\.count) == [2, 2])
        }
    }

    @Test(arguments: StorageKind.available)
    func rejectsCursorsItDidNotHandOut(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            await #expect(throws: StorageError.self) {
                _ = try await storage.events(
                    source: "default", filter: EventFilter(), page: PageRequest(cursor: "'; DROP TABLE events; --"))
            }
            #expect(try await storage.counts(source: "default").events == 0)
        }
    }

    @Test(arguments: StorageKind.available)
    func talliesSurveysAndPromos(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            var messages: [IngestMessage] = []
            for _ in 0..<4 {
                messages.append(
                    TestMessages.ingest("survey_presented", properties: ["id": "rate", "responseType": "choice"]))
            }
            messages.append(
                TestMessages.ingest("survey_response", properties: ["id": "rate", "type": "choice", "option": "5"]))
            messages.append(
                TestMessages.ingest("survey_response", properties: ["id": "rate", "type": "choice", "option": "5"]))
            messages.append(
                TestMessages.ingest("survey_response", properties: ["id": "rate", "type": "choice", "option": 3]))
            messages.append(
                TestMessages.ingest("survey_dismissed", properties: ["id": "rate", "responseType": "choice"]))
            messages.append(TestMessages.ingest("survey_presented", properties: ["id": "ask", "responseType": "text"]))
            messages.append(
                TestMessages.ingest(
                    "survey_response", user: "u9", at: 5,
                    properties: ["id": "ask", "type": "text", "text": "More dark mode"]))
            for index in 0..<10 {
                messages.append(
                    TestMessages.ingest(
                        "promo_impression",
                        properties: ["appID": "notes", "currentAppID": index < 6 ? "mail" : "calendar"]))
            }
            messages.append(TestMessages.ingest("promo_tap", properties: ["appID": "notes", "currentAppID": "mail"]))
            messages.append(
                TestMessages.ingest("promo_tap", properties: ["appID": "notes", "currentAppID": "calendar"]))
            // Every other one with a member kept beside its properties: SQLite stores the others as
            // their properties object alone, and the tallies read both shapes.
            for index in messages.indices where index.isMultiple(of: 2) {
                messages[index].payload = #"{"integrations":{},"# + messages[index].payload.dropFirst()
            }
            _ = try await storage.insert(messages, source: "default")
            if kind == .sqlite {
                let shapes = try await storage.backend.query(
                    "SELECT lifted & \(StoredPayload.Lifted.properties.rawValue) != 0, COUNT(*) FROM events GROUP BY 1 ORDER BY 1",
                    [])
                #expect(shapes.map { $0.map(\.int) } == [[0, 11], [1, 11]], "\(shapes)")
            }

            let query = CollectorQuery(storage: storage)
            let surveys = try await query.surveyResults(source: "default")
            #expect(
                surveys == [
                    SurveyResult(surveyId: "ask", presented: 1, responded: 1, textAnswers: 1),
                    SurveyResult(
                        surveyId: "rate", presented: 4, responded: 3, dismissed: 1, choices: ["5": 2, "3": 1]),
                ])
            let answers = try await query.surveyTextAnswers(source: "default", surveyId: "ask")
            #expect(answers.items.map(\.text) == ["More dark mode"])
            #expect(answers.items.first?.userId == "u9")

            let promos = try await query.promoResults(source: "default")
            #expect(promos.count == 1)
            let notes = try #require(promos.first)
            #expect(notes.impressions == 10)
            #expect(notes.taps == 2)
            #expect(notes.clickThrough == 0.2)
            #expect(notes.byPromotingApp["mail"] == PromoCounts(impressions: 6, taps: 1))
            #expect(notes.byPromotingApp["calendar"] == PromoCounts(impressions: 4, taps: 1))
        }
    }

    @Test(arguments: StorageKind.available)
    func storesAndReplacesConfigs(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            #expect(try await storage.config(source: "default", kind: "surveys") == nil)
            let first = StoredConfig(
                source: "default", kind: "surveys", body: #"{"surveys":[]}"#, etag: "a", updatedAt: 1)
            try await storage.putConfig(first)
            #expect(try await storage.config(source: "default", kind: "surveys") == first)
            let second = StoredConfig(
                source: "default", kind: "surveys", body: #"{"surveys":[{"id":"x"}]}"#, etag: "b", updatedAt: 2)
            try await storage.putConfig(second)
            #expect(try await storage.config(source: "default", kind: "surveys") == second)
            #expect(try await storage.config(source: "other", kind: "surveys") == nil)
        }
    }

    @Test(arguments: StorageKind.available)
    func writesScenariosOptimistically(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let key = ScenarioKey(source: "default", namespace: "onboarding", scenarioId: "s1")
            #expect(try await storage.scenario(key) == nil)
            #expect(
                try await storage.putScenario(key, body: "{}", condition: .version(1), quota: .standard, at: 0)
                    == .preconditionFailed(current: nil))
            #expect(
                try await storage.putScenario(key, body: "{}", condition: .exists, quota: .standard, at: 0)
                    == .preconditionFailed(current: nil))
            #expect(
                try await storage.putScenario(key, body: #"{"a":1}"#, condition: .create, quota: .standard, at: 0)
                    == .written(version: 1)
            )
            #expect(
                try await storage.putScenario(key, body: "{}", condition: .create, quota: .standard, at: 0)
                    == .preconditionFailed(current: 1))
            #expect(
                try await storage.putScenario(key, body: #"{"a":2}"#, condition: .version(1), quota: .standard, at: 0)
                    == .written(version: 2))
            #expect(
                try await storage.putScenario(key, body: #"{"a":3}"#, condition: .version(1), quota: .standard, at: 0)
                    == .preconditionFailed(current: 2))
            #expect(
                try await storage.putScenario(key, body: #"{"a":4}"#, condition: .exists, quota: .standard, at: 0)
                    == .written(version: 3)
            )
            #expect(try await storage.scenario(key) == StoredScenario(body: #"{"a":4}"#, version: 3))
        }
    }

    @Test(arguments: StorageKind.available)
    func scenarioWritesStayWithinTheSourcesQuota(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let quota = ScenarioQuota(maximumDocuments: 2, maximumBytes: 30)
            func key(_ id: String, source: String = "default") -> ScenarioKey {
                ScenarioKey(source: source, namespace: "n", scenarioId: id)
            }
            let ten = #"{"a":"12"}"#  // 10 bytes
            #expect(
                try await storage.putScenario(key("a"), body: ten, condition: .create, quota: quota, at: 0)
                    == .written(version: 1))
            #expect(
                try await storage.putScenario(key("b"), body: ten, condition: .create, quota: quota, at: 0)
                    == .written(version: 1))
            // A third document: over the count.
            #expect(
                try await storage.putScenario(key("c"), body: "{}", condition: .create, quota: quota, at: 0)
                    == .quotaExceeded(documents: 2, bytes: 20))
            #expect(try await storage.scenario(key("c")) == nil)
            // Growing one past the bytes (20 - 10 + 21 > 30), then shrinking it: the total follows.
            let big = #"{"a":"12345678901234"}"#  // 22 bytes
            #expect(
                try await storage.putScenario(key("a"), body: big, condition: .version(1), quota: quota, at: 0)
                    == .quotaExceeded(documents: 2, bytes: 20))
            #expect(
                try await storage.putScenario(key("a"), body: "{}", condition: .version(1), quota: quota, at: 0)
                    == .written(version: 2))
            #expect(
                try await storage.putScenario(key("b"), body: big, condition: .version(1), quota: quota, at: 0)
                    == .written(version: 2))
            // Another source has its own totals.
            #expect(
                try await storage.putScenario(
                    key("c", source: "web"), body: big, condition: .create, quota: quota, at: 0)
                    == .written(version: 1))
            let usage = try await storage.backend.query(
                "SELECT source, documents, bytes FROM scenario_usage ORDER BY source", [])
            #expect(
                usage.map { [$0[0].text ?? "", "\($0[1].int ?? -1)", "\($0[2].int ?? -1)"] } == [
                    ["default", "2", "24"], ["web", "1", "22"],
                ])
        }
    }

    @Test(arguments: StorageKind.available)
    func concurrentCreatesNeverPassTheQuota(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let quota = ScenarioQuota(maximumDocuments: 4, maximumBytes: 1_000)
            let first = ScenarioKey(source: "default", namespace: "n", scenarioId: "first")
            #expect(
                try await storage.putScenario(first, body: "{}", condition: .create, quota: quota, at: 0)
                    == .written(version: 1))
            let results = try await withThrowingTaskGroup(of: ScenarioWriteResult.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await storage.putScenario(
                            ScenarioKey(source: "default", namespace: "n", scenarioId: "doc-\(index)"), body: "{}",
                            condition: .create, quota: quota, at: 0)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.filter { $0 == .written(version: 1) }.count == 3)
            #expect(try await storage.backend.query("SELECT COUNT(*) FROM scenarios", []).first?.first?.int == 4)
        }
    }

    @Test(arguments: StorageKind.available)
    func concurrentScenarioWritersOneWins(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let key = ScenarioKey(source: "default", namespace: "n", scenarioId: "race")
            _ = try await storage.putScenario(key, body: "{}", condition: .create, quota: .standard, at: 0)
            let results = try await withThrowingTaskGroup(of: ScenarioWriteResult.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await storage.putScenario(
                            key, body: #"{"writer":\#(index)}"#, condition: .version(1), quota: .standard, at: 0)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.filter { $0 == .written(version: 2) }.count == 1)
            #expect(results.filter { $0 == .preconditionFailed(current: 2) }.count == 7)
        }
    }

    @Test(arguments: StorageKind.available)
    func schemaSixAndSevenUpgradeADatabaseThatHoldsScenarios(kind: StorageKind) async throws {
        // At schema 5: no sizes, no totals, no deletion tables; documents written then.
        try await OlderSchemas.upgrade(kind, from: 5) { backend async throws in
            _ = try await backend.writeStatement(
                "INSERT INTO scenarios (source, namespace, scenario_id, body, version, updated_at) VALUES "
                    + "('default', 'n', 'a', '{\"k\":\"ü\"}', 1, 0), ('default', 'n', 'b', '{}', 3, 0), "
                    + "('web', 'n', 'a', '{\"x\":1}', 1, 0)", [])
            #expect(try await SchemaMigrations.migrate(backend) == SchemaMigrations.versions(from: 6))
        } opened: { storage async throws in
            // Sizes in bytes (ü is two), totals per source, and the documents as they were.
            let sizes = try await storage.backend.query(
                "SELECT source, scenario_id, bytes FROM scenarios ORDER BY source, scenario_id", [])
            #expect(
                sizes.map { "\($0[0].text ?? "")/\($0[1].text ?? ""):\($0[2].int ?? -1)" } == [
                    "default/a:10", "default/b:2", "web/a:7",
                ])
            let usage = try await storage.backend.query(
                "SELECT source, documents, bytes FROM scenario_usage ORDER BY source", [])
            #expect(
                usage.map { "\($0[0].text ?? ""):\($0[1].int ?? -1):\($0[2].int ?? -1)" } == [
                    "default:2:12", "web:1:7",
                ])
            #expect(
                try await storage.scenario(ScenarioKey(source: "default", namespace: "n", scenarioId: "b"))
                    == StoredScenario(body: "{}", version: 3))
            #expect(try await storage.suppressedIDs().isEmpty)
        }
    }

    @Test(arguments: StorageKind.available)
    func schemaEightFillsProfilesAndIdentitiesFromStoredEvents(kind: StorageKind) async throws {
        try await OlderSchemas.upgrade(kind, from: 7) { backend async throws in
            // Stored under schema 7: rows written straight into events, as its ingest wrote them.
            let rows: [(String, String, String?, String?, Int64, String)] = [
                ("e1", "track", nil, "a1", 1000, #"{"type":"track","event":"browse"}"#),
                ("i1", "identify", "u1", "a1", 2000, #"{"type":"identify","traits":{"plan":"pro"}}"#),
                ("i2", "identify", "u2", "a1", 2500, #"{"type":"identify"}"#),  // a1 merged already
                ("e2", "track", "u1", "a1", 3000, #"{"type":"track","event":"buy"}"#),
                ("l1", "alias", "u2", nil, 4000, #"{"type":"alias","previousId":"a9","userId":"u2"}"#),
            ]
            for (id, type, user, anonymous, time, payload) in rows {
                var insert = SQLStatement(
                    backend.dialect,
                    "INSERT INTO events (source, message_id, type, user_id, anonymous_id, timestamp, received_at, payload) VALUES "
                )
                insert.bindTuple([
                    .text("default"), .text(id), .text(type), .optional(user), .optional(anonymous), .int(time),
                    .int(time), .text(payload),
                ])
                _ = try await backend.writeStatement(insert.sql, insert.binds)
            }
            #expect(try await SchemaMigrations.migrate(backend) == SchemaMigrations.versions(from: 8))
        } opened: { storage async throws in
            #expect(try await storage.counts(source: "default") == StorageCounts(events: 5, sessions: 0))
            #expect(
                try await storage.profile(source: "default", userId: "u1")
                    == ProfileRow(userId: "u1", firstSeen: 2000, lastSeen: 3000, eventCount: 2))
            #expect(try await storage.profile(source: "default", userId: "u2")?.eventCount == 2)
            #expect(try await storage.mergedAnonymousIDs(source: "default", userId: "u1") == ["a1"])
            #expect(try await storage.mergedAnonymousIDs(source: "default", userId: "u2") == ["a9"])
        }
    }

    @Test(arguments: StorageKind.available)
    func migrationsRunOnceAndAreRecorded(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            #expect(try await SchemaMigrations.migrate(storage.backend) == [])
            let versions = try await storage.backend.query("SELECT version FROM schema_migrations", [])
            #expect(
                versions.compactMap { $0.first?.int }.sorted() == SchemaMigrations.versions(from: 1).map(Int64.init))
            // SQLite's migrations sort on disk; the writer's temporary storage is memory again after.
            if kind == .sqlite {
                let setting = try await storage.backend.write { transaction in
                    try await transaction.query("PRAGMA temp_store", [])
                }
                #expect(setting.first?.first?.int == 2)
            }
        }
    }

    @Test(arguments: StorageKind.available)
    func keepsPayloadsVerbatimAndSQLTextInert(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let hostile = "x'); DROP TABLE events; --"
            let message = TestMessages.ingest(
                hostile, id: hostile, session: hostile, user: hostile, properties: ["q": .string(hostile)])
            #expect(try await storage.insert([message], source: hostile) == [true])
            let page = try await storage.events(
                source: hostile, filter: EventFilter(name: hostile), page: PageRequest())
            let stored = try #require(page.items.first)
            #expect(stored.messageId == hostile)
            #expect(stored.properties["q"] == .string(hostile))
            #expect(stored.message == (try JSONParser.parse(message.payload)))
        }
    }
}
