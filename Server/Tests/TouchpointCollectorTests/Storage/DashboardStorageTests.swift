import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// The queries the dashboard added to the storage, against SQLite and (when configured) PostgreSQL.
struct DashboardStorageTests {
    static func seed(_ storage: SQLCollectorStorage) async throws {
        let messages = [
            TestMessages.ingest("open", session: "a", user: "u1", at: 0),
            TestMessages.ingest("buy", session: "a", user: "u1", at: 30),
            TestMessages.ingest("open", session: "b", user: nil, anonymous: "anon-b", at: 90),
            TestMessages.ingest("open", session: "c", user: "u2", at: 200),
            TestMessages.ingest("buy", session: "c", user: "u2", at: 3600),
        ]
        #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
    }

    @Test(arguments: StorageKind.available)
    func sessionsFilterByUserRangeAndEventName(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            try await Self.seed(storage)
            func ids(_ filter: SessionFilter) async throws -> [String] {
                try await storage.sessions(source: "default", filter: filter, page: PageRequest()).items.map(
                    \.sessionId)
            }
            let base = TestMessages.base
            #expect(try await ids(SessionFilter()) == ["c", "b", "a"])
            #expect(try await ids(SessionFilter(user: .any("u1"))) == ["a"])
            #expect(try await ids(SessionFilter(user: .any("anon-b"))) == ["b"])
            #expect(try await ids(SessionFilter(eventName: "buy")) == ["c", "a"])
            #expect(try await ids(SessionFilter(user: .any("u2"), eventName: "buy")) == ["c"])
            // Sessions overlapping [60 s, 100 s): b (90), and c (200…3600) does not start before 100.
            let range = TimeRange(from: base.addingTimeInterval(60), to: base.addingTimeInterval(100))
            #expect(try await ids(SessionFilter(range: range)) == ["b"])
            #expect(try await ids(SessionFilter(range: TimeRange(from: base.addingTimeInterval(1000)))) == ["c"])
            #expect(try await ids(SessionFilter(eventName: "nothing")) == [])
        }
    }

    @Test(arguments: StorageKind.available)
    func countsEventsPerMinuteAndActiveSessions(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            try await Self.seed(storage)
            let base = TestMessages.base
            let minutes = try await storage.eventsPerMinute(
                source: "default", range: TimeRange(from: base, to: base.addingTimeInterval(3600)))
            #expect(
                minutes == [
                    MinuteCount(minute: base, count: 2), MinuteCount(minute: base.addingTimeInterval(60), count: 1),
                    MinuteCount(minute: base.addingTimeInterval(180), count: 1),
                ])
            #expect(try await storage.eventsPerMinute(source: "other", range: .all) == [])
            #expect(try await storage.activeSessionCount(source: "default", since: base.addingTimeInterval(60)) == 2)
            #expect(try await storage.activeSessionCount(source: "default", since: base.addingTimeInterval(4000)) == 0)
        }
    }

    @Test(arguments: StorageKind.available)
    func textAnswersPageNewestFirst(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let answers = (0..<5).map { index in
                TestMessages.ingest(
                    "survey_response", at: Double(index),
                    properties: ["id": "s", "type": "text", "text": .string("t\(index)")])
            }
            _ = try await storage.insert(answers, source: "default")
            let first = try await storage.surveyTextAnswers(
                source: "default", surveyId: "s", range: .all, newestFirst: true, page: PageRequest(limit: 3))
            #expect(first.items.map(\.text) == ["t4", "t3", "t2"])
            let second = try await storage.surveyTextAnswers(
                source: "default", surveyId: "s", range: .all, newestFirst: true,
                page: PageRequest(limit: 3, cursor: first.nextCursor))
            #expect(second.items.map(\.text) == ["t1", "t0"])
            #expect(second.nextCursor == nil)
            let oldest = try await storage.surveyTextAnswers(
                source: "default", surveyId: "s", range: .all, page: PageRequest(limit: 2))
            #expect(oldest.items.map(\.text) == ["t0", "t1"])
        }
    }
}
