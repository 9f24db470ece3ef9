import Foundation
import Synchronization
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// A collector with its events in ClickHouse (`--events`), killed with SIGKILL while four clients
/// send batches, started again and sent what was not acknowledged (and, as retries do, some of
/// what was): every event ends in PostgreSQL and in ClickHouse's answers exactly once.
@Suite(
    "Kills with ClickHouse",
    .enabled(
        if: ClickHouseTestEnvironment.enabled && PostgresTestEnvironment.enabled,
        "needs TOUCHPOINT_TEST_CLICKHOUSE_URL and TOUCHPOINT_TEST_POSTGRES_URL"))
struct ClickHouseKillTests {
    static let writeKey = "kill-key-0123456789"
    static let adminToken = "kill-token-0123456789"
    static let batchCount = 40
    static let batchSize = 50

    @Test func everyEventIsStoredOnceAfterKillsAndResends() async throws {
        let database = try await PostgresTestEnvironment.createDatabase()
        do {
            try await ClickHouseTestEnvironment.withDatabaseURL { events in
                try await Self.run(database: database.url, events: events)
            }
        } catch {
            await PostgresTestEnvironment.drop(database.name)
            throw error
        }
        await PostgresTestEnvironment.drop(database.name)
    }

    /// Numbers that tasks add to: the acknowledged batches, the lanes that finished.
    final class Progress: Sendable {
        let batches = Mutex(Set<Int>())
        let lanes = Mutex(0)
    }

    static func run(database: String, events: ClickHouseURL) async throws {
        let directory = try TemporaryDirectory(prefix: "collector-clickhouse-kill")
        let batches = (0..<batchCount).map { batch in
            TestMessages.batch(
                (0..<batchSize).map { TestMessages.track("e", id: "kill-\(batch)-\($0)", session: "s\(batch % 5)") })
        }
        let acknowledged = Progress()
        var kills = 0
        let acknowledgedBeforeLast = Mutex(0)
        for round in 0..<4 {
            let collector = try await CollectorProcess.start([
                "--data", directory.path, "--database", database, "--events", events.description,
                "--write-key", writeKey, "--admin-token", adminToken,
            ])
            let client = LiveClient(port: collector.port)
            let isLast = round == 3
            if isLast { acknowledgedBeforeLast.withLock { $0 = acknowledged.batches.withLock { $0.count } } }
            // The last round sends every batch again; the others what is not acknowledged yet.
            let pending = (0..<batchCount).filter { isLast || !acknowledged.batches.withLock { $0 }.contains($0) }
            let before = acknowledged.batches.withLock { $0.count }
            let lanesDone = Progress()
            // Each acknowledgement and each lane's end, for the killer to wait on.
            let (changes, change) = AsyncStream.makeStream(of: Void.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<4 {
                    group.addTask {
                        for batch in pending where batch % 4 == lane {
                            // A request cut by the kill is not acknowledged: sent again next round.
                            guard let response = try? await client.postBatch(batches[batch], writeKey: writeKey),
                                response.status == 200
                            else { continue }
                            acknowledged.batches.withLock { _ = $0.insert(batch) }
                            change.yield()
                        }
                        lanesDone.lanes.withLock { $0 += 1 }
                        change.yield()
                    }
                }
                if !isLast {
                    // Killed once a few more batches were acknowledged, with others in flight.
                    group.addTask {
                        for await _ in changes {
                            if acknowledged.batches.withLock({ $0.count }) >= min(before + 4, batchCount)
                                || lanesDone.lanes.withLock({ $0 }) == 4
                            {
                                break
                            }
                        }
                        collector.process.send(SIGKILL)
                    }
                }
                try await group.waitForAll()
            }
            if isLast {
                #expect(acknowledged.batches.withLock { $0.count } == batchCount)
                #expect(try await client.count(adminToken: adminToken) == batchCount * batchSize)
                #expect(try await collector.terminate() == 0)
            } else {
                _ = await collector.process.exit()
                kills += 1
            }
        }
        #expect(kills == 3)

        let client = ClickHouseClient(url: events, logger: PostgresTestEnvironment.logger)
        // Read as the insights read: without `FINAL`, the resent messages kept once.
        let rows = try await client.rows(
            """
            SELECT count() AS n, uniqExact(message_id) AS ids
            FROM (\(ClickHouseEvents.select("message_id", source: "default", where: [])))
            """)
        // The last round sent every batch again: each message acknowledged before it is a resent one.
        let resent = try await client.rows(
            "SELECT uniqExact(message_id) AS n FROM \(ClickHouseEvents.resentTable) WHERE source = 'default'")
        await client.close()
        #expect(rows.first?["n"]?.intValue == batchCount * batchSize)
        #expect(rows.first?["ids"]?.intValue == batchCount * batchSize)
        #expect(acknowledgedBeforeLast.withLock { $0 } > 0)
        #expect((resent.first?["n"]?.intValue ?? 0) >= acknowledgedBeforeLast.withLock { $0 } * batchSize)
    }
}
