import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Under a steady stream of writes the WAL starts over (the checkpointer catches up with the
/// writer), so its file does not grow without bound.
struct SQLiteCheckpointTests {
    @Test func theWALStartsOverUnderSteadyWrites() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-wal")
        let path = directory.appending("touchpoint.sqlite").path
        let storage = try await SQLCollectorStorage.sqlite(path: path, logger: PostgresTestEnvironment.logger)
        let filler = String(repeating: "x", count: 2_000)
        // Writes back to back for six checkpoint intervals: a passive checkpoint alone would never
        // find the WAL idle to start it over.
        let clock = ContinuousClock()
        let start = clock.now
        var rounds = 0
        while clock.now - start < SQLiteBackend.checkpointInterval * 6 || rounds < 10 {
            let round = rounds
            rounds += 1
            let messages = (0..<100).map { index in
                TestMessages.ingest(
                    "e", id: "wal-\(round)-\(index)", session: "s\(round % 4)", at: Double(round),
                    properties: ["filler": .string(filler)])
            }
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
        }
        // The WAL header's checkpoint sequence number (bytes 12..<16, big-endian) counts how often
        // the WAL started over from its beginning.
        let header = try #require(FileHandle(forReadingAtPath: path + "-wal")?.readData(ofLength: 32))
        #expect(header.count == 32)
        let restarts = header.dropFirst(12).prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        #expect(restarts >= 2, "the WAL started over \(restarts) times in \(rounds) writes")
        #expect(try await storage.counts(source: "default").events == rounds * 100)
        try await storage.close()
    }

    /// Emptying the log after a deletion tries without waiting on readers (a wait would hold the
    /// write lock, and ingest, for the busy timeout), then gives the writer its busy timeout back.
    @Test func purgingTheLogLeavesTheWritersBusyTimeout() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-purge")
        let backend = try await SQLiteBackend.open(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger)
        _ = try await backend.writeStatement("CREATE TABLE t (x INTEGER)", [])
        _ = try await backend.writeStatement("INSERT INTO t VALUES (1)", [])
        try await backend.purgeLog()
        let timeout = try await backend.writeStatement("PRAGMA busy_timeout", [])
        #expect(timeout.first?.first?.int == Int64(SQLiteBackend.busyTimeoutMilliseconds))
        #expect(try await backend.query("SELECT x FROM t", []).first?.first?.int == 1)
        try await backend.close()
    }
}
