import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// Each source's counts of events and sessions (schema 13) are kept by the writes: after every
/// kind of write and delete they equal what counting the rows gives, in both stores.
struct SourceCountsTests {
    /// What counting the rows gives.
    static func counted(_ storage: SQLCollectorStorage, source: String) async throws -> StorageCounts {
        var statement = SQLStatement(storage.dialect, "SELECT (SELECT COUNT(*) FROM events WHERE source = ")
        statement.bind(.text(source))
        statement.append("), (SELECT COUNT(*) FROM sessions WHERE source = ")
        statement.bind(.text(source))
        statement.append(")")
        let row = try await storage.backend.query(statement).first
        return StorageCounts(events: Int(row?[0].int ?? -1), sessions: Int(row?[1].int ?? -1))
    }

    static func expectCounts(
        _ storage: SQLCollectorStorage, _ expected: [String: StorageCounts],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for (source, counts) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(
                try await counted(storage, source: source) == counts, "rows of \(source)",
                sourceLocation: sourceLocation)
            #expect(
                try await storage.counts(source: source) == counts, "counts of \(source)",
                sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: StorageKind.available)
    func theCountsFollowEveryWriteAndDelete(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            try await Self.expectCounts(storage, ["default": StorageCounts(events: 0, sessions: 0)])
            // Two sessions and an event without one; a user's events in a third session.
            let first = [
                TestMessages.ingest("a", id: "m1", session: "s1", at: 0),
                TestMessages.ingest("b", id: "m2", session: "s1", at: 1),
                TestMessages.ingest("c", id: "m3", session: "s2", at: 2),
                TestMessages.ingest("d", id: "m4", session: nil, at: 3),
                TestMessages.ingest("e", id: "m5", session: "s3", user: "u1", anonymous: "x1", at: 4),
            ]
            #expect(try await storage.insert(first, source: "default") == Array(repeating: true, count: 5))
            #expect(try await storage.insert([first[0]], source: "other") == [true])
            try await Self.expectCounts(
                storage,
                ["default": StorageCounts(events: 5, sessions: 3), "other": StorageCounts(events: 1, sessions: 1)])

            // Sent again with new events of a known session and of a new one: only the new count.
            let second = [
                first[1], TestMessages.ingest("f", id: "m6", session: "s1", at: 5), first[2],
                TestMessages.ingest("g", id: "m7", session: "s4", at: 6),
                TestMessages.ingest("g", id: "m7", session: "s4", at: 6),
            ]
            #expect(try await storage.insert(second, source: "default") == [false, true, false, true, false])
            #expect(try await storage.insert(second, source: "default") == Array(repeating: false, count: 5))
            try await Self.expectCounts(storage, ["default": StorageCounts(events: 7, sessions: 4)])

            // Deleting a user's data takes its events and sessions off.
            let deletion = StoredDeletion(
                id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
            let deleted = try await storage.deleteUserData(deletion, userIds: ["u1"], anonymousIds: [], suppress: [])
            #expect(deleted.events == 1 && deleted.sessions == 1)
            try await Self.expectCounts(
                storage,
                ["default": StorageCounts(events: 6, sessions: 3), "other": StorageCounts(events: 1, sessions: 1)])

            // Retention, a batch at a time.
            let late = Timestamp.milliseconds(TestMessages.base.addingTimeInterval(3600)) / 60_000
            #expect(try await storage.deleteEvents(source: "default", beforeMinute: late, limit: 4) == 4)
            try await Self.expectCounts(storage, ["default": StorageCounts(events: 2, sessions: 3)])
            #expect(try await storage.deleteEvents(source: "default", beforeMinute: late, limit: 4) == 2)
            let later = Timestamp.milliseconds(TestMessages.base.addingTimeInterval(3600))
            #expect(try await storage.deleteSessions(source: "default", lastBefore: later, limit: 2) == 2)
            try await Self.expectCounts(
                storage,
                ["default": StorageCounts(events: 0, sessions: 1), "other": StorageCounts(events: 1, sessions: 1)])
        }
    }

    /// PostgreSQL adds a row per write; reading many folds them into one, with the same sums.
    @Test(arguments: StorageKind.available)
    func manyWritesAreFoldedWithTheSameSums(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let writes = SourceCounts.foldAbove + 10
            for index in 0..<writes {
                let message = TestMessages.ingest("e", id: "m\(index)", session: "s\(index % 7)", at: Double(index))
                #expect(try await storage.insert([message], source: "default") == [true])
            }
            let rows = { () async throws -> Int in
                let result = try await storage.backend.query("SELECT COUNT(*) FROM source_counts", [])
                return Int(result.first?.first?.int ?? -1)
            }
            #expect(try await rows() == (kind == .sqlite ? 1 : writes))
            try await Self.expectCounts(storage, ["default": StorageCounts(events: writes, sessions: 7)])
            #expect(try await rows() == 1)
            try await Self.expectCounts(storage, ["default": StorageCounts(events: writes, sessions: 7)])
        }
    }
}

extension SourceCountsTests {
    /// Folds while writers add rows: no write is lost or counted twice (PostgreSQL's case; SQLite
    /// runs the same code on its one row).
    @Test(arguments: StorageKind.available)
    func foldsDuringConcurrentWritesKeepEveryWrite(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let writers = 6
            let perWriter = 40
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for index in 0..<perWriter {
                            let message = TestMessages.ingest(
                                "e", id: "w\(writer)-\(index)", session: "s\(writer)-\(index % 3)", at: Double(index))
                            _ = try await storage.insert([message], source: "default")
                        }
                    }
                }
                group.addTask {
                    for _ in 0..<30 { try await SourceCounts.fold(source: "default", in: storage.backend) }
                }
                try await group.waitForAll()
            }
            try await Self.expectCounts(
                storage, ["default": StorageCounts(events: writers * perWriter, sessions: writers * 3)])
            try await SourceCounts.fold(source: "default", in: storage.backend)
            try await Self.expectCounts(
                storage, ["default": StorageCounts(events: writers * perWriter, sessions: writers * 3)])
        }
    }
}
