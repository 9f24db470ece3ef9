import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// The collector's own binding of SQLite's C API: values in and out, reused statements, errors that
/// name the statement, a full database as an error.
struct SQLiteConnectionTests {
    private static func open(_ directory: TemporaryDirectory) throws -> SQLiteConnection {
        try SQLiteConnection.open(path: directory.appending("test.sqlite").path)
    }

    /// Runs `body` with a connection to a new database in a directory of its own, closed after.
    private static func withConnection(_ body: (SQLiteConnection) throws -> Void) throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-connection")
        let connection = try open(directory)
        defer { try? connection.close() }
        try body(connection)
    }

    @Test func valuesRoundTripWithEmptyTextKeptApartFromNull() throws {
        try Self.withConnection { connection in
            try connection.execute("CREATE TABLE t (a, b, c, d, e)")
            let text = "Grüße, 世界 \u{1F600} \"quoted\" \0 inside"
            try connection.execute(
                "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
                [.text(""), .null, .int(-9_007_199_254_740_993), .double(0.5), .text(text)])
            let rows = try connection.execute("SELECT a, a IS NULL, b, c, d, e, typeof(a) FROM t")
            #expect(
                rows == [
                    [.text(""), .int(0), .null, .int(-9_007_199_254_740_993), .double(0.5), .text(text), .text("text")]
                ])
        }
    }

    @Test func aReusedStatementTakesNewValuesEachRun() throws {
        try Self.withConnection { connection in
            try connection.execute("CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER)")
            let insert = "INSERT INTO t VALUES (?, ?) ON CONFLICT (id) DO NOTHING"
            let rows: [(String, Int64?)] = [("a", 1), ("b", nil), ("a", 3), ("c", 4), ("b", 5)]
            let changed = try connection.executeEach(insert, rows) { row, statement in
                try statement.bind(1, row.0)
                try statement.bind(2, row.1)
            }
            #expect(changed == [true, true, false, true, false])
            // The same statement again, from the cache.
            #expect(
                try connection.executeEach(insert, [("d", Int64(6))]) {
                    try $1.bind(1, $0.0); try $1.bind(2, $0.1)
                } == [true])
            let stored = try connection.execute("SELECT id, n FROM t ORDER BY id")
            #expect(
                stored == [
                    [.text("a"), .int(1)], [.text("b"), .null], [.text("c"), .int(4)], [.text("d"), .int(6)],
                ])
        }
    }

    /// A full cache keeps what is used: the least recently used statement makes room for a new one.
    @Test func theLeastRecentlyUsedStatementMakesRoom() throws {
        try Self.withConnection { connection in
            let capacity = SQLiteConnection.cachedStatements
            func run(_ n: Int) throws { #expect(try connection.execute("SELECT \(n)") == [[.int(Int64(n))]]) }
            for n in 0..<capacity { try run(n) }
            #expect(connection.statementsPrepared == capacity)
            try run(0)  // kept: now the most recently used
            #expect(connection.statementsPrepared == capacity)
            try run(capacity)  // new: puts out the least recently used, `SELECT 1`
            #expect(connection.statementsPrepared == capacity + 1)
            try run(0)
            try run(capacity)
            #expect(connection.statementsPrepared == capacity + 1)
            try run(1)
            #expect(connection.statementsPrepared == capacity + 2)
            // Many one-off statements later, one in use all along is still kept.
            for n in 1_000..<1_200 {
                try run(n)
                try run(0)
            }
            #expect(connection.statementsPrepared == capacity + 2 + 200)
        }
    }

    @Test func errorsNameTheStatementAndLeaveItUsable() throws {
        try Self.withConnection { connection in
            try connection.execute("CREATE TABLE t (id TEXT PRIMARY KEY)")
            let insert = "INSERT INTO t VALUES (?)"
            try connection.execute(insert, [.text("x")])
            let duplicate = try #require(throws: StorageError.self) { try connection.execute(insert, [.text("x")]) }
            #expect(duplicate.code == .database)
            #expect(duplicate.message.contains("UNIQUE constraint failed: t.id"), "\(duplicate.message)")
            #expect(duplicate.message.contains("INSERT INTO t VALUES (?)"), "\(duplicate.message)")
            // The failed statement was reset: the next run of the same SQL works.
            try connection.execute(insert, [.text("y")])
            #expect(try connection.execute("SELECT count(*) FROM t") == [[.int(2)]])

            let typo = try #require(throws: StorageError.self) { try connection.execute("SELEC 1") }
            #expect(typo.message.contains("syntax error") && typo.message.contains("SELEC 1"), "\(typo.message)")
            let two = try #require(throws: StorageError.self) { try connection.execute("SELECT 1; SELECT 2") }
            #expect(two.message.contains("more than one statement"), "\(two.message)")
            // Trailing white space and a trailing semicolon are one statement.
            #expect(try connection.execute("SELECT 1;  \n") == [[.int(1)]])
            let arrays = try #require(throws: StorageError.self) {
                try connection.execute("SELECT ?", [.intArray([1])])
            }
            #expect(arrays.code == .unsupported)
        }
    }

    @Test func aFullDatabaseIsAnErrorAndKeepsWhatWasCommitted() throws {
        try Self.withConnection { connection in
            try connection.execute("CREATE TABLE t (body TEXT)")
            try connection.execute("INSERT INTO t VALUES ('kept')")
            // A database that may not grow past its current pages stands in for a full disk: SQLite
            // reports both as SQLITE_FULL.
            let pages = try #require(try connection.execute("PRAGMA page_count").first?.first?.int)
            try connection.execute("PRAGMA max_page_count = \(pages)")
            let filler = String(repeating: "x", count: 100_000)
            let full = try #require(throws: StorageError.self) {
                try connection.execute("BEGIN")
                defer { _ = try? connection.execute("ROLLBACK") }
                for _ in 0..<10 { try connection.execute("INSERT INTO t VALUES (?)", [.text(filler)]) }
            }
            #expect(full.code == .database)
            #expect(full.message.contains("full"), "\(full.message)")
            #expect(try connection.execute("SELECT body FROM t") == [[.text("kept")]])
        }
    }

    @Test func aClosedConnectionRefusesWorkAndNoDatabaseOpensWhereNoDirectoryIs() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-connection")
        let connection = try Self.open(directory)
        try connection.execute("SELECT 1")
        try connection.close()
        try connection.close()
        let closed = try #require(throws: StorageError.self) { try connection.execute("SELECT 1") }
        #expect(closed.code == .unavailable && closed.message.contains("closed"), "\(closed.message)")
        let missing = directory.appending("no/such/directory/test.sqlite").path
        let error = try #require(throws: StorageError.self) { try SQLiteConnection.open(path: missing) }
        #expect(error.code == .unavailable)
        #expect(error.message.contains(missing), "\(error.message)")
    }

    /// A write whose task is cancelled halfway still runs every statement it asks for, so it never
    /// leaves a transaction open on the writer for the next write to trip over.
    @Test func aCancelledWriteCommitsAndTheNextWriteWorks() async throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-connection")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger)
        let backend = storage.backend
        let write = Task {
            try await backend.write { transaction in
                _ = try await transaction.query("CREATE TABLE marks (n INTEGER)", [])
                withUnsafeCurrentTask { $0?.cancel() }
                _ = try await transaction.query("INSERT INTO marks VALUES (1)", [])
                return Task.isCancelled
            }
        }
        #expect(try await write.value, "the write's task was cancelled halfway")
        _ = try await backend.write { transaction in
            try await transaction.query("INSERT INTO marks VALUES (2)", [])
        }
        #expect(try await backend.query("SELECT n FROM marks ORDER BY n", []) == [[.int(1)], [.int(2)]])
        try await storage.close()
    }
}

/// The writer of a new store (whose migrations ran many statements on it once) prepares the
/// statements of an ingest write once, not at every write.
struct SQLiteWriterStatementTests {
    @Test func aWriteReusesTheStatementsOfTheWriteBefore() async throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-statements")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger)
        let backend = try #require(storage.backend as? SQLiteBackend)
        // Every kind of row a write adds: new and known sessions, people and contexts, a sign-in.
        func batch(_ round: Int) -> [IngestMessage] {
            (0..<20).map { (n: Int) -> IngestMessage in
                let type: MessageType = n == 0 ? .identify : .track
                let session = "s-\(round)-\(n % 4)"
                let anonymous = "a-\(round)-\(n % 3)"
                return TestMessages.ingest(
                    "e", type: type, session: session, user: "u-\(round)", anonymous: anonymous,
                    properties: ["n": .int(n)])
            }
        }
        #expect(try await storage.insert(batch(0), source: "default").allSatisfy { $0 })
        #expect(try await storage.insert(batch(1), source: "default").allSatisfy { $0 })
        let prepared = backend.writerStatementsPrepared
        for round in 2..<5 {
            #expect(try await storage.insert(batch(round), source: "default").allSatisfy { $0 })
        }
        #expect(backend.writerStatementsPrepared == prepared, "prepared again: a write's statements were not kept")
        #expect(try await storage.counts(source: "default") == StorageCounts(events: 100, sessions: 20))
        try await storage.close()
    }
}

/// A database that cannot grow (what a full disk looks like to SQLite) fails a write as a whole:
/// nothing of it is acknowledged or kept, and writes work again once there is room.
struct SQLiteFullDatabaseTests {
    @Test func aWriteThatDoesNotFitFailsWholeAndTheNextOneWorks() async throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-full")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger)
        let first = (0..<10).map { TestMessages.ingest("e", id: "kept-\($0)", session: "s1") }
        #expect(try await storage.insert(first, source: "default").allSatisfy { $0 })
        let pages = try #require(try await storage.backend.query("PRAGMA page_count", []).first?.first?.int)
        _ = try await storage.backend.writeStatement("PRAGMA max_page_count = \(pages + 2)", [])
        let filler = String(repeating: "x", count: 4_000)
        let big = (0..<50).map {
            TestMessages.ingest("e", id: "big-\($0)", session: "s2", properties: ["filler": .string(filler)])
        }
        let error = await #expect(throws: StorageError.self) { try await storage.insert(big, source: "default") }
        #expect(error?.code == .database)
        #expect(error?.message.contains("full") == true, "\(String(describing: error))")
        #expect(try await storage.counts(source: "default") == StorageCounts(events: 10, sessions: 1))
        _ = try await storage.backend.writeStatement("PRAGMA max_page_count = 1000000", [])
        #expect(try await storage.insert(big, source: "default").allSatisfy { $0 })
        #expect(try await storage.counts(source: "default") == StorageCounts(events: 60, sessions: 2))
        try await storage.close()
    }
}
