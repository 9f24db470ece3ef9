import Dispatch
import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// SQLite's reads run on a pool of connections: a slow query takes one, and `/health`'s ping and
/// other reads go to the others instead of waiting behind it.
struct SQLiteReadPoolTests {
    /// How long the held reader waits to be let go before it gives up (and so fails the test)
    /// rather than hanging the run: far past what the other reads take even on a loaded machine.
    static let holdLimit = DispatchTimeInterval.seconds(120)

    @Test func aSlowQueryDoesNotHoldUpOtherReads() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-read-pool")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger)
        let backend = try #require(storage.backend as? SQLiteBackend)
        #expect(backend.readersBusy == Array(repeating: 0, count: SQLiteBackend.readerCount))
        // A read that holds its connection until the test lets it go: however slow or fast the
        // machine, it is still running while the other reads are made.
        let release = DispatchSemaphore(value: 0)
        let gaveUp = Locked(false)
        let slow = Task {
            try await backend.read { connection in
                if release.wait(timeout: .now() + Self.holdLimit) == .timedOut {
                    gaveUp.withLock { $0 = true }
                }
                return try connection.execute("SELECT 1", [], bytesAt: []).first?.first?.int
            }
        }
        #expect(await eventually { backend.readersBusy.contains(1) })
        // While the slow read holds its reader, the others answer.
        for _ in 0..<5 { try await storage.ping() }
        #expect(try await storage.counts(source: "default").events == 0)
        #expect(!gaveUp.value, "the reads waited for the held reader")
        release.signal()
        #expect(try await slow.value == 1)
        #expect(backend.readersBusy == Array(repeating: 0, count: SQLiteBackend.readerCount))
        try await storage.close()
    }
}
