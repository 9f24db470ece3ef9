import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// The SQLite the collector is built with (sqlite-nio's, pinned exactly in Package.swift) and
/// what the collector relies on in it. A new sqlite-nio release that changes any of this fails
/// here, not in a user's database.
struct SQLiteVersionTests {
    /// The SQLite that sqlite-nio 1.13.2 bundles.
    static let expectedVersion = "3.54.1"

    @Test func theBundledSQLiteIsTheOneTheCollectorWasWrittenFor() throws {
        let directory = try TemporaryDirectory(prefix: "sqlite-version")
        let connection = try SQLiteConnection.open(path: directory.appending("v.sqlite").path)
        defer { try? connection.close() }
        let version = try connection.execute("SELECT sqlite_version()").first?.first?.text
        #expect(version == Self.expectedVersion)

        // Write-ahead logging: readers beside the writer, the checkpointer on its own connection.
        #expect(try connection.execute("PRAGMA journal_mode = WAL").first?.first?.text == "wal")
        // JSON functions: the survey and promo queries read properties with json_extract.
        #expect(try connection.execute(#"SELECT json_extract('{"a":{"b":2}}', '$.a.b')"#).first?.first?.int == 2)
        // RETURNING (3.35 and later): conditional scenario writes and inserts report what they did.
        _ = try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        #expect(try connection.execute("INSERT INTO t (v) VALUES ('x') RETURNING id").first?.first?.int == 1)
        // Expression indexes (the time indexes by minute) and ON CONFLICT upserts.
        _ = try connection.execute("CREATE INDEX t_len ON t ((length(v) / 2))")
        _ = try connection.execute(
            "INSERT INTO t (id, v) VALUES (1, 'y') ON CONFLICT (id) DO UPDATE SET v = excluded.v")
        #expect(try connection.execute("SELECT v FROM t").first?.first?.text == "y")

        let options = Set(try connection.execute("PRAGMA compile_options").compactMap { $0.first?.text })
        // Threads: each connection is used from one thread at a time (its own), which needs at
        // least multi-thread mode; 0 would make every connection unsafe off the opening thread.
        #expect(!options.contains("THREADSAFE=0"), "\(options.sorted())")
        #expect(!options.contains("OMIT_WAL"))
        #expect(!options.contains("OMIT_JSON"))
    }
}
