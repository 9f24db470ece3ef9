import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// SQLite finds a session's row by its key (``SessionKeys``): in memory for the sessions after the
/// watermark, in `session_keys` for the others, each row found compared on the session's id.
struct SessionKeysTests {
    /// Each session's rows: (source, id) → [rowid, count of events].
    static func sessions(_ backend: any SQLBackend) async throws -> [String: [[Int64]]] {
        let rows = try await backend.query(
            "SELECT source, touchpoint_id(session_id), rowid, event_count FROM sessions", [])
        var found: [String: [[Int64]]] = [:]
        for row in rows {
            found["\(row[0].text ?? "")/\(row[1].text ?? "")", default: []].append([row[2].int ?? -1, row[3].int ?? -1])
        }
        return found
    }

    /// The ids of a session's events, as the query API lists them.
    static func events(_ storage: SQLCollectorStorage, _ session: String, source: String = "default") async throws
        -> [String]
    {
        try await storage.sessionEvents(source: source, sessionId: session, page: PageRequest(limit: 100)).items.map(
            \.messageId)
    }

    static let ids = [
        "s-one", "4D9F3E52-7A41-4C5B-9E0A-1B2C3D4E5F60", "8e1f0a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b", "s-four",
    ]

    /// Sessions written before and after merges, and across restarts (with no reader looking them
    /// up first), each keep one row that every later event of theirs is added to; the key of each
    /// is in memory or in `session_keys`, and the merge moves the watermark.
    @Test func eachSessionKeepsOneRowThroughMergesAndRestarts() async throws {
        let directory = try TemporaryDirectory(prefix: "session-keys")
        let path = directory.appending("touchpoint.sqlite").path
        var sent = 0
        func send(_ storage: SQLCollectorStorage, _ sessions: [String], source: String = "default") async throws {
            let messages = sessions.map { session in
                sent += 1
                return TestMessages.ingest("e", id: "m\(sent)", session: session, at: Double(sent))
            }
            #expect(try await storage.insert(messages, source: source).allSatisfy { $0 })
        }
        func open() async throws -> SQLCollectorStorage {
            try await SQLCollectorStorage.sqlite(
                path: path, logger: PostgresTestEnvironment.logger,
                tuning: SQLiteTuning(sessionsLookedUpAhead: false, sessionMerge: (2, 3)))
        }
        var storage = try await open()
        var keys = try #require(storage.sqliteWriter?.sessionRows.keys)
        try await send(storage, [Self.ids[0]])
        #expect(keys.keysInMemory == 1 && keys.mergedThrough == 0)
        // A second new session makes a merge due (at least two keys): both move to the table.
        try await send(storage, [Self.ids[1], Self.ids[0]])
        await keys.waitForMerge()
        #expect(keys.keysInMemory == 0 && keys.mergedThrough == 2)
        let merged = try await storage.backend.query("SELECT COUNT(*) FROM session_keys", [])
        #expect(merged == [[.int(2)]])
        // The same id in another source is another session.
        try await send(storage, [Self.ids[0]], source: "web")
        try await storage.close()

        storage = try await open()
        keys = try #require(storage.sqliteWriter?.sessionRows.keys)
        // The session after the watermark is read back into memory.
        #expect(keys.keysInMemory == 1 && keys.mergedThrough == 2)
        // Two found in the table, two new, one twice; then a merge, during which one is found.
        try await send(storage, Self.ids + [Self.ids[0]])
        try await send(storage, [Self.ids[0]], source: "web")
        await keys.waitForMerge()
        #expect(keys.keysInMemory == 0 && keys.mergedThrough == 5)
        try await storage.close()

        storage = try await open()
        #expect(
            try await Self.sessions(storage.backend) == [
                "default/\(Self.ids[0])": [[1, 4]], "default/\(Self.ids[1])": [[2, 2]],
                "web/\(Self.ids[0])": [[3, 2]], "default/\(Self.ids[2])": [[4, 1]],
                "default/\(Self.ids[3])": [[5, 1]],
            ])
        #expect(try await Self.events(storage, Self.ids[0]) == ["m1", "m3", "m5", "m9"])
        #expect(try await Self.events(storage, Self.ids[0], source: "web") == ["m4", "m10"])
        #expect(try await Self.events(storage, Self.ids[2]) == ["m7"])
        #expect(try await Self.events(storage, "s-none").isEmpty)
        try await storage.close()
    }

    /// Two sessions whose ids share a key (every key the same, forced) are both stored, each
    /// event added to its own session's row, whether the key is in memory or in the table; and a
    /// session's events are listed without the other's.
    @Test func sessionsThatShareAKeyAreBothStored() async throws {
        let directory = try TemporaryDirectory(prefix: "session-keys-shared")
        let path = directory.appending("touchpoint.sqlite").path
        func open() async throws -> SQLCollectorStorage {
            try await SQLCollectorStorage.sqlite(
                path: path, logger: PostgresTestEnvironment.logger,
                tuning: SQLiteTuning(keyOverride: { _, _ in 42 }, sessionsLookedUpAhead: false, sessionMerge: (3, 3)))
        }
        var storage = try await open()
        let keys = try #require(storage.sqliteWriter?.sessionRows.keys)
        #expect(keys.key("default", "a") == keys.key("default", "b"))
        let first = [
            TestMessages.ingest("e", id: "m1", session: "a", at: 1),
            TestMessages.ingest("e", id: "m2", session: "b", at: 2),
        ]
        #expect(try await storage.insert(first, source: "default") == [true, true])
        #expect(
            try await storage.insert([TestMessages.ingest("e", id: "m3", session: "a", at: 3)], source: "default") == [
                true
            ])
        #expect(try await Self.sessions(storage.backend) == ["default/a": [[1, 2]], "default/b": [[2, 1]]])
        // A third makes a merge due: the three keys, all 42, in the table.
        #expect(
            try await storage.insert([TestMessages.ingest("e", id: "m4", session: "c", at: 4)], source: "default") == [
                true
            ])
        await keys.waitForMerge()
        #expect(keys.keysInMemory == 0)
        try await storage.close()

        storage = try await open()
        let later = [
            TestMessages.ingest("e", id: "m5", session: "b", at: 5),
            TestMessages.ingest("e", id: "m6", session: "c", at: 6),
            TestMessages.ingest("e", id: "m7", session: "d", at: 7),
        ]
        #expect(try await storage.insert(later, source: "default") == [true, true, true])
        #expect(
            try await Self.sessions(storage.backend) == [
                "default/a": [[1, 2]], "default/b": [[2, 2]], "default/c": [[3, 2]], "default/d": [[4, 1]],
            ])
        #expect(try await Self.events(storage, "b") == ["m2", "m5"])
        #expect(try await Self.events(storage, "d") == ["m7"])
        // The query seeks the key in `session_keys` and the rows in the events' session index
        // (the key of "d" in the table, its row in memory too).
        #expect(storage.sqliteWriter?.sessionRows.keys.rowsInMemory([42]) == [4])
        var statement = SQLStatement(.sqlite, "SELECT seq FROM events WHERE ")
        storage.writer.appendSessions(source: "default", ["d"], to: &statement)
        let plan = try await storage.backend.query("EXPLAIN QUERY PLAN " + statement.sql, statement.binds)
            .compactMap { $0.last?.text }.joined(separator: "\n")
        #expect(plan.contains("SEARCH session_keys USING PRIMARY KEY (key=?)"), "\(plan)")
        #expect(plan.contains("SEARCH events USING INDEX events_session_key (session_key=?)"), "\(plan)")
        try await storage.close()
    }

    /// A deleted session's key is forgotten (the trigger), and its id sent again starts a new row.
    /// When the deleted session was the newest, SQLite gives its rowid to the next new session,
    /// at or below the watermark: that key goes into the table at once, so a start (which reads
    /// back only the sessions after the watermark) still finds the session.
    @Test func aDeletedSessionsKeyIsForgottenAndItsRowidGivenAgainIsFound() async throws {
        let directory = try TemporaryDirectory(prefix: "session-keys-deleted")
        let path = directory.appending("touchpoint.sqlite").path
        func open() async throws -> SQLCollectorStorage {
            try await SQLCollectorStorage.sqlite(
                path: path, logger: PostgresTestEnvironment.logger,
                tuning: SQLiteTuning(sessionsLookedUpAhead: false, sessionMerge: (2, 10)))
        }
        var storage = try await open()
        let keys = try #require(storage.sqliteWriter?.sessionRows.keys)
        let old = [
            TestMessages.ingest("e", id: "m1", session: "a-old", at: 1),
            TestMessages.ingest("e", id: "m2", session: "b-newest", at: 2),
        ]
        #expect(try await storage.insert(old, source: "default") == [true, true])
        await keys.waitForMerge()
        #expect(keys.mergedThrough == 2 && keys.keysInMemory == 0)
        // The newest session (rows are made in the order of their ids) deleted, with its events,
        // as a deletion request does.
        _ = try await storage.backend.writeStatement("DELETE FROM events WHERE session_key = 2", [])
        _ = try await storage.backend.writeStatement("DELETE FROM sessions WHERE session_key = 2", [])
        #expect(try await storage.backend.query("SELECT session FROM session_keys ORDER BY 1", []) == [[.int(1)]])
        // Its rowid, given to the next new session, is at the watermark: its key is in the table now.
        #expect(
            try await storage.insert([TestMessages.ingest("e", id: "m3", session: "c-other", at: 3)], source: "default")
                == [true])
        #expect(
            try await storage.backend.query("SELECT session FROM session_keys ORDER BY 1", []) == [
                [.int(1)], [.int(2)],
            ])
        try await storage.close()

        storage = try await open()
        let again = [
            TestMessages.ingest("e", id: "m4", session: "c-other", at: 4),
            TestMessages.ingest("e", id: "m5", session: "b-newest", at: 5),
        ]
        #expect(try await storage.insert(again, source: "default") == [true, true])
        #expect(
            try await Self.sessions(storage.backend) == [
                "default/a-old": [[1, 1]], "default/c-other": [[2, 2]], "default/b-newest": [[3, 1]],
            ])
        #expect(try await Self.events(storage, "b-newest") == ["m5"])
        try await storage.close()
    }

    /// Schema 19 keeps every session, its rowid (its events' `session_key`) and its count, keys
    /// every one of them and moves the watermark to the last; after the upgrade a stored
    /// session's later events are added to its one row.
    @Test func theUpgradeKeysEveryStoredSession() async throws {
        let directory = try TemporaryDirectory(prefix: "session-keys-upgrade")
        let path = directory.appending("touchpoint.sqlite").path
        let messages = (0..<30).map {
            TestMessages.ingest("e", id: "m\($0)", session: Self.ids[$0 % 4], at: Double($0))
        }
        // Stored at schema 9, then up to 18: each session's rowid in its events, its id packed
        // when it is a UUID, the minute of its last event.
        let backend = try await SQLiteBackend.open(path: path, logger: PostgresTestEnvironment.logger)
        try await SchemaMigrations.migrate(backend, upTo: 9)
        try await OlderSchemas.store(messages, source: "default", in: backend)
        try await SchemaMigrations.migrate(backend, upTo: 18)
        let before = try await Self.sessions(backend)
        #expect(before.count == 4)
        try await backend.close()

        let storage = try await SQLCollectorStorage.sqlite(
            path: path, logger: PostgresTestEnvironment.logger, tuning: SQLiteTuning(sessionsLookedUpAhead: false))
        #expect(try await Self.sessions(storage.backend) == before)
        let keys = try #require(storage.sqliteWriter?.sessionRows.keys)
        #expect(keys.mergedThrough == 4 && keys.keysInMemory == 0)
        let keyed = try await storage.backend.query("SELECT key, session FROM session_keys ORDER BY session", [])
        let expected = before.map { session, rows in
            let parts = session.split(separator: "/", maxSplits: 1).map(String.init)
            return [keys.key(parts[0], parts[1]), rows[0][0]]
        }
        #expect(keyed.map { $0.map { $0.int ?? -1 } } == expected.sorted { $0[1] < $1[1] })
        let session = "default/\(Self.ids[1])"
        #expect(
            try await storage.insert(
                [TestMessages.ingest("e", id: "m30", session: Self.ids[1], at: 30)], source: "default")
                == [true])
        let row = try #require(before[session]?.first)
        #expect(try await Self.sessions(storage.backend)[session] == [[row[0], row[1] + 1]])
        #expect(try await Self.events(storage, Self.ids[1]).count == 9)
        try await storage.close()
    }
}
