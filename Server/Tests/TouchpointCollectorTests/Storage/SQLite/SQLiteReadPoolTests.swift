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

    /// Two scans at once go to readers of their own even when every reader has a query in hand:
    /// the second scan does not wait behind the first (the halves of a range, read at once).
    @Test func aScanGoesToAReaderWithoutAScan() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-read-pool")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger)
        let backend = try #require(storage.backend as? SQLiteBackend)
        let count = SQLiteBackend.readerCount
        let gates = (0...count).map { _ in DispatchSemaphore(value: 0) }
        @Sendable func held(_ gate: DispatchSemaphore) { _ = gate.wait(timeout: .now() + Self.holdLimit) }
        // A scan on the first reader, then a query on each of the others.
        let first = Task { try await backend.read { _ in held(gates[0]) } }
        #expect(await eventually { backend.readerScans == [1] + Array(repeating: 0, count: count - 1) })
        var queries: [Task<Void?, any Error>] = []
        for index in 1..<count {
            queries.append(Task { try await backend.readIfIdle { _ in held(gates[index]) } })
            #expect(await eventually { backend.readersBusy[index] == 1 })
        }
        #expect(backend.readersBusy == Array(repeating: 1, count: count))
        // Every reader has one query in hand: the second scan goes to one without a scan.
        let second = Task { try await backend.read { _ in held(gates[count]) } }
        #expect(await eventually { backend.readerScans.reduce(0, +) == 2 })
        #expect(backend.readerScans == [1, 1] + Array(repeating: 0, count: count - 2))
        for gate in gates { gate.signal() }
        try await first.value
        for query in queries { #expect(try await query.value != nil) }
        try await second.value
        #expect(backend.readersBusy == Array(repeating: 0, count: count))
        #expect(backend.readerScans == Array(repeating: 0, count: count))
        try await storage.close()
    }
}
