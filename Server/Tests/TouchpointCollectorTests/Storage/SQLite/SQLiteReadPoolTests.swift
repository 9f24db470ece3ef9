import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// SQLite's reads run on a pool of connections: a slow query takes one, and `/health`'s ping and
/// other reads go to the others instead of waiting behind it.
struct SQLiteReadPoolTests {
    /// Counts to 10 million in SQL: seconds of work on one connection.
    static let slowQuery =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000) SELECT COUNT(*) FROM c"

    @Test func aSlowQueryDoesNotHoldUpOtherReads() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-read-pool")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger)
        let backend = try #require(storage.backend as? SQLiteBackend)
        #expect(backend.readersBusy == Array(repeating: 0, count: SQLiteBackend.readerCount))
        let finished = Locked(false)
        let slow = Task {
            let rows = try await backend.query(Self.slowQuery, [])
            finished.withLock { $0 = true }
            return rows.first?.first?.int
        }
        #expect(await eventually { backend.readersBusy.contains(1) })
        // While the slow query holds its reader, the others answer.
        for _ in 0..<5 { try await storage.ping() }
        #expect(try await storage.counts(source: "default").events == 0)
        #expect(!finished.value, "the reads waited for the slow query")
        #expect(try await slow.value == 10_000_000)
        #expect(backend.readersBusy == Array(repeating: 0, count: SQLiteBackend.readerCount))
        try await storage.close()
    }
}
