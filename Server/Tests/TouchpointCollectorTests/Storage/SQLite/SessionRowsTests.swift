import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// SQLite's writer adds a session's later events to the row it remembers by rowid, not through
/// the (source, session id) index, and only when that row is still the session's.
struct SessionRowsTests {
    /// A session's row: its rowid, count of events and first and last times.
    static func row(_ storage: SQLCollectorStorage, _ sessionId: String) async throws -> [Int64] {
        let rows = try await storage.backend.query(
            "SELECT rowid, event_count, first_timestamp, last_timestamp FROM sessions WHERE session_id = ?",
            [.text(sessionId)])
        return try #require(rows.first).map { $0.int ?? -1 }
    }

    static func time(_ offset: TimeInterval) -> Int64 {
        Timestamp.milliseconds(TestMessages.base.addingTimeInterval(offset))
    }

    /// `sessions_recent` holds the minute of a session's last event: a write moves a session's
    /// entry only when its last event moves to a later minute, by either way to its row (its
    /// remembered rowid, or the index after a restart forgot it).
    @Test func aSessionsRecentEntryMovesOnlyWithItsMinute() async throws {
        let directory = try TemporaryDirectory(prefix: "session-rows")
        let path = directory.appending("touchpoint.sqlite").path
        // The start of a minute, a few seconds after the messages' base time.
        let start = (Self.time(0) / 60_000 + 1) * 60_000
        let offset = Double(start - Self.time(0)) / 1000
        func event(_ id: String, _ seconds: Double) -> IngestMessage {
            TestMessages.ingest("e", id: id, session: "s1", at: offset + seconds)
        }
        var storage = try await SQLCollectorStorage.sqlite(path: path, logger: PostgresTestEnvironment.logger)
        var rows = try #require(storage.sqliteWriter?.sessionRows)
        func expectMinute(_ last: Double) async throws {
            let stored = try await storage.backend.query(
                "SELECT last_minute, last_timestamp FROM sessions WHERE session_id = 's1'", [])
            let expected = Self.time(offset + last)
            #expect(stored == [[SQLValue.int(expected / 60_000), SQLValue.int(expected)]])
        }
        #expect(try await storage.insert([event("m0", 1)], source: "default") == [true])
        try await expectMinute(1)
        for n in 1..<5 {  // later in the same minute, and one earlier event
            #expect(try await storage.insert([event("m\(n)", Double(n * 10))], source: "default") == [true])
        }
        #expect(try await storage.insert([event("early", -30)], source: "default") == [true])
        #expect(rows.addedByRowid == 5)
        #expect(rows.movedToLaterMinute == 0)
        try await expectMinute(40)
        #expect(try await storage.insert([event("m5", 61)], source: "default") == [true])
        #expect(rows.movedToLaterMinute == 1)
        try await expectMinute(61)
        try await storage.close()

        // After a restart, and with no reader looking the session up first, the row is found
        // through the index: the same rule.
        storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(sessionsLookedUpAhead: false))
        rows = try #require(storage.sqliteWriter?.sessionRows)
        #expect(try await storage.insert([event("m6", 125)], source: "default") == [true])
        #expect(rows.addedByRowid == 0 && rows.movedToLaterMinute == 1)
        try await expectMinute(125)
        #expect(try await storage.insert([event("m7", 126)], source: "default") == [true])
        #expect(rows.addedByRowid == 1 && rows.movedToLaterMinute == 1)
        #expect(try await storage.insert([event("m8", 185)], source: "default") == [true])
        #expect(rows.movedToLaterMinute == 2)
        try await expectMinute(185)
        try await storage.close()
    }

    /// A session's user id (the newest) and anonymous id (the first) are set by statements of
    /// their own only when they change, by either way to its row.
    @Test func aSessionsIdsAreSetOnlyWhenTheyChange() async throws {
        let directory = try TemporaryDirectory(prefix: "session-ids")
        let path = directory.appending("touchpoint.sqlite").path
        var storage = try await SQLCollectorStorage.sqlite(path: path, logger: PostgresTestEnvironment.logger)
        var rows = try #require(storage.sqliteWriter?.sessionRows)
        var sent = 0
        func send(_ session: String, user: String?, anonymous: String?) async throws {
            sent += 1
            let message = TestMessages.ingest(
                "e", id: "m\(sent)", session: session, user: user, anonymous: anonymous, at: Double(sent))
            #expect(try await storage.insert([message], source: "default") == [true])
        }
        func ids(_ session: String) async throws -> [SQLValue] {
            let found = try await storage.backend.query(
                "SELECT user_id, anonymous_id FROM sessions WHERE session_id = ?", [.text(session)])
            return try #require(found.first)
        }
        try await send("s1", user: nil, anonymous: "anon-1")
        try await send("s1", user: nil, anonymous: "anon-2")  // the first anonymous id stays
        #expect(rows.idsSet == 0)
        #expect(try await ids("s1") == [.null, .text("anon-1")])
        try await send("s1", user: "user-1", anonymous: "anon-1")  // a user id where there was none
        #expect(rows.idsSet == 1)
        try await send("s1", user: "user-1", anonymous: nil)
        #expect(rows.idsSet == 1)
        try await send("s1", user: "user-2", anonymous: "anon-1")  // the newest user id
        #expect(rows.idsSet == 2)
        #expect(try await ids("s1") == [.text("user-2"), .text("anon-1")])
        try await send("s2", user: "user-3", anonymous: nil)
        try await send("s2", user: nil, anonymous: "anon-3")  // an anonymous id where there was none
        #expect(rows.idsSet == 3)
        #expect(try await ids("s2") == [.text("user-3"), .text("anon-3")])
        #expect(rows.addedByRowid == 5)
        try await storage.close()

        // After a restart, and with no reader looking the sessions up first, the rows are found
        // through the index: the same rule.
        storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(sessionsLookedUpAhead: false))
        rows = try #require(storage.sqliteWriter?.sessionRows)
        try await send("s1", user: "user-2", anonymous: "anon-9")
        #expect(rows.addedByRowid == 0 && rows.idsSet == 0)
        try await send("s2", user: "user-4", anonymous: nil)
        #expect(rows.addedByRowid == 0 && rows.idsSet == 1)
        #expect(try await ids("s1") == [.text("user-2"), .text("anon-1")])
        #expect(try await ids("s2") == [.text("user-4"), .text("anon-3")])
        try await storage.close()
    }

    /// Before a write, a reader finds the rows of the sessions the writer does not remember (all
    /// of them after a restart), so the writer adds to them by rowid. What it found is a hint the
    /// writer checks: a session whose row was deleted after the reader found it, and its rowid
    /// given to another session, is stored again, and the other session's row is left alone.
    @Test func aReaderFindsSessionsBeforeTheWriteAndTheWriterChecksWhatItFound() async throws {
        let directory = try TemporaryDirectory(prefix: "session-look-ahead")
        let path = directory.appending("touchpoint.sqlite").path
        var storage = try await SQLCollectorStorage.sqlite(path: path, logger: PostgresTestEnvironment.logger)
        let first = [
            TestMessages.ingest("e", id: "m1", session: "s1", at: 0),
            TestMessages.ingest("e", id: "m2", session: "s2", at: 1),
        ]
        #expect(try await storage.insert(first, source: "default") == [true, true])
        try await storage.close()

        storage = try await SQLCollectorStorage.sqlite(path: path, logger: PostgresTestEnvironment.logger)
        let rows = try #require(storage.sqliteWriter?.sessionRows)
        let writer = try #require(storage.sqliteWriter)
        // s1 is found ahead and added to by its rowid; s3 is new, found nowhere, and inserted.
        let second = [
            TestMessages.ingest("e", id: "m3", session: "s1", at: 2),
            TestMessages.ingest("e", id: "m4", session: "s3", at: 3),
        ]
        #expect(try await storage.insert(second, source: "default") == [true, true])
        #expect(rows.foundBeforeTheWrite == 1 && rows.addedByRowid == 1)
        #expect(try await Self.row(storage, "s1")[1] == 2)
        #expect(try await Self.row(storage, "s3")[1] == 1)

        // s2 found ahead; then its row deleted and its rowid given to a new session, s4.
        let s2 = try await Self.row(storage, "s2")
        let late = TestMessages.ingest("e", id: "m5", session: "s2", at: 4)
        await writer.lookAhead(writer.rows([late], source: "default"))
        #expect(rows.foundBeforeTheWrite == 2)
        _ = try await storage.backend.writeStatement("DELETE FROM sessions WHERE session_id = 's2'", [])
        _ = try await storage.backend.writeStatement(
            """
            INSERT INTO sessions (rowid, source, session_id, first_timestamp, last_timestamp, event_count, last_minute) \
            VALUES (?, 'default', 's4', 0, 0, 7, 0)
            """, [.int(s2[0])])
        #expect(try await storage.insert([late], source: "default") == [true])
        // The hint failed its check: s2 stored again in a row of its own, s4 untouched.
        #expect(rows.addedByRowid == 1)
        let again = try await Self.row(storage, "s2")
        #expect(again[0] != s2[0] && again[1] == 1)
        #expect(try await Self.row(storage, "s4") == [s2[0], 7, 0, 0])
        // The event belongs to s2's new row.
        let linked = try await storage.backend.query(
            "SELECT message_id FROM events WHERE session_key = ?", [.int(again[0])])
        #expect(linked == [[.text("m5")]])
        try await storage.close()
    }

    /// Only a reader with nothing in hand looks sessions up before a write: with every reader
    /// busy (a slow query of the dashboard's, say) the request goes on at once, and the writer
    /// looks its sessions up itself.
    @Test func sessionsAreLookedUpAheadOnlyOnAnIdleReader() async throws {
        let directory = try TemporaryDirectory(prefix: "session-look-ahead-busy")
        let path = directory.appending("touchpoint.sqlite").path
        var storage = try await SQLCollectorStorage.sqlite(path: path, logger: PostgresTestEnvironment.logger)
        #expect(
            try await storage.insert([TestMessages.ingest("e", id: "m1", session: "s1", at: 0)], source: "default") == [
                true
            ])
        try await storage.close()
        storage = try await SQLCollectorStorage.sqlite(path: path, logger: PostgresTestEnvironment.logger)
        let rows = try #require(storage.sqliteWriter?.sessionRows)
        let writer = try #require(storage.sqliteWriter)
        let sqlite = try #require(storage.backend as? SQLiteBackend)
        let gate = DispatchSemaphore(value: 0)
        let readers = SQLiteBackend.readerCount
        let busy = (0..<readers).map { _ in Task { try await sqlite.read { _ in gate.wait() } } }
        while sqlite.readersBusy != Array(repeating: 1, count: readers) { await Task.yield() }
        let later = TestMessages.ingest("e", id: "m2", session: "s1", at: 1)
        let returned = Locked(false)
        let lookAhead = Task {
            await writer.lookAhead(writer.rows([later], source: "default"))
            returned.withLock { $0 = true }
        }
        // Until it returns, or queues behind a held reader (which it must not).
        while !returned.value, sqlite.readersBusy.allSatisfy({ $0 == 1 }) { await Task.yield() }
        #expect(returned.value, "waited for a busy reader: \(sqlite.readersBusy)")
        for _ in 0..<readers { gate.signal() }
        await lookAhead.value
        #expect(rows.foundBeforeTheWrite == 0)
        // Counted for `/metrics` as skipped.
        #expect(writer.steps.lookAheads == (read: 0, skipped: 1))
        for task in busy { try await task.value }
        #expect(try await storage.insert([later], source: "default") == [true])
        #expect(rows.foundBeforeTheWrite == 1 && rows.addedByRowid == 1)
        #expect(writer.steps.lookAheads == (read: 1, skipped: 1))
        #expect(try await Self.row(storage, "s1")[1] == 2)
        try await storage.close()
    }

    @Test func aSessionWrittenAgainIsAddedToByItsRowid() async throws {
        try await withStorage(.sqlite) { storage async throws in
            let rows = try #require(storage.sqliteWriter?.sessionRows)
            #expect(
                try await storage.insert([TestMessages.ingest("a", id: "m1", session: "s1", at: 0)], source: "default")
                    == [true])
            let first = try await Self.row(storage, "s1")
            #expect(rows.addedByRowid == 0)
            // An earlier and a later event of s1, and a new session.
            let second = [
                TestMessages.ingest("b", id: "m2", session: "s1", at: -5),
                TestMessages.ingest("c", id: "m3", session: "s1", at: 10),
                TestMessages.ingest("d", id: "m4", session: "s2", at: 1),
            ]
            #expect(try await storage.insert(second, source: "default") == [true, true, true])
            #expect(rows.addedByRowid == 1)
            #expect(try await Self.row(storage, "s1") == [first[0], 3, Self.time(-5), Self.time(10)])
            #expect(try await Self.row(storage, "s2").dropFirst() == [1, Self.time(1), Self.time(1)])
            // Every event of s1 names its one row.
            let keys = try await storage.backend.query(
                "SELECT DISTINCT session_key FROM events WHERE session_id = 's1'", [])
            #expect(keys.map { $0.first?.int } == [first[0]])
            try await SourceCountsTests.expectCounts(storage, ["default": StorageCounts(events: 4, sessions: 2)])
            // The same session in another source is another row.
            #expect(
                try await storage.insert([TestMessages.ingest("e", id: "m5", session: "s1")], source: "other") == [true]
            )
            #expect(rows.addedByRowid == 1)
            try await SourceCountsTests.expectCounts(
                storage,
                ["default": StorageCounts(events: 4, sessions: 2), "other": StorageCounts(events: 1, sessions: 1)])
        }
    }

    /// A deleted newest row's rowid is given to the next new session: the writer's remembered
    /// rowid for the deleted session then names another session's row, which must not take in
    /// the deleted session's events.
    @Test func aRememberedRowidThatIsNowAnotherSessionsIsNotUsed() async throws {
        try await withStorage(.sqlite) { storage async throws in
            let rows = try #require(storage.sqliteWriter?.sessionRows)
            let theirs = TestMessages.ingest("a", id: "m1", session: "sa", user: "user-1", anonymous: "anon-a")
            #expect(try await storage.insert([theirs], source: "default") == [true])
            let rowid = try await Self.row(storage, "sa")[0]
            let deletion = StoredDeletion(
                id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
            let deleted = try await storage.deleteUserData(
                deletion, userIds: ["user-1"], anonymousIds: [], suppress: [])
            #expect(deleted.sessions == 1)
            #expect(
                try await storage.insert([TestMessages.ingest("b", id: "m2", session: "sb", at: 1)], source: "default")
                    == [true])
            // The case under test: sb has sa's old rowid.
            #expect(try await Self.row(storage, "sb")[0] == rowid)
            // sa comes back: a row of its own, sb's untouched.
            let again = TestMessages.ingest("c", id: "m3", session: "sa", user: "user-2", anonymous: "anon-b", at: 2)
            #expect(try await storage.insert([again], source: "default") == [true])
            #expect(rows.addedByRowid == 0)
            #expect(try await Self.row(storage, "sb").dropFirst() == [1, Self.time(1), Self.time(1)])
            let returned = try await Self.row(storage, "sa")
            #expect(returned[0] != rowid)
            #expect(Array(returned.dropFirst()) == [1, Self.time(2), Self.time(2)])
            try await SourceCountsTests.expectCounts(storage, ["default": StorageCounts(events: 2, sessions: 2)])
        }
    }

    /// Retention deletes a session's row; a late event of the session makes a new one.
    @Test func aRememberedRowidThatIsGoneIsNotUsed() async throws {
        try await withStorage(.sqlite) { storage async throws in
            let rows = try #require(storage.sqliteWriter?.sessionRows)
            #expect(
                try await storage.insert([TestMessages.ingest("a", id: "m1", session: "s1")], source: "default") == [
                    true
                ])
            #expect(
                try await storage.insert([TestMessages.ingest("b", id: "m2", session: "s2", at: 60)], source: "default")
                    == [true])
            let before = Self.time(30)
            #expect(try await storage.deleteSessions(source: "default", lastBefore: before, limit: 10) == 1)
            #expect(
                try await storage.insert([TestMessages.ingest("c", id: "m3", session: "s1", at: 90)], source: "default")
                    == [true])
            #expect(rows.addedByRowid == 0)
            #expect(try await Self.row(storage, "s1").dropFirst() == [1, Self.time(90), Self.time(90)])
            try await SourceCountsTests.expectCounts(storage, ["default": StorageCounts(events: 3, sessions: 2)])
        }
    }

    /// The update by rowid reads the table by its key, not the (source, session id) index.
    @Test func theUpdateByRowidReadsNoIndex() async throws {
        try await withStorage(.sqlite) { storage async throws in
            let plan = try await storage.backend.query(
                "EXPLAIN QUERY PLAN " + SessionRows.sqliteAddByRowid,
                [.int(0), .int(0), .int(1), .int(1), .text("default"), .text("s1")]
            )
            .compactMap { $0.last?.text }
            #expect(plan == ["SEARCH sessions USING INTEGER PRIMARY KEY (rowid=?)"])
        }
    }
}
