import Foundation
import Synchronization
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// A collector with its events in a ClickHouse of the test's own (`--events`, ``PrivateClickHouse``)
/// while four clients send batches: in some rounds the collector is killed with SIGKILL, in one
/// ClickHouse is (the collector answers `503` until it is back, and the clients resend), in one
/// both are; everything is started again on the same data and sent what was not acknowledged
/// (and, as retries do, some of what was): every event ends in PostgreSQL and in ClickHouse's
/// answers exactly once.
@Suite(
    "Kills with ClickHouse",
    .enabled(
        if: ClickHouseTestEnvironment.enabled && PostgresTestEnvironment.enabled && PrivateClickHouse.testsRun,
        "needs TOUCHPOINT_TEST_CLICKHOUSE_URL, TOUCHPOINT_TEST_POSTGRES_URL and clickhouse-server"))
struct ClickHouseKillTests {
    static let writeKey = "kill-key-0123456789"
    static let adminToken = "kill-token-0123456789"
    static let batchCount = 40
    static let batchSize = 50

    /// What a round kills, once a few more batches are acknowledged, with others in flight.
    enum Kill {
        /// The collector.
        case collector
        /// ClickHouse, restarted once the collector answered `503` for it; the collector lives on.
        case clickHouse
        /// ClickHouse, then the collector.
        case both
        /// Nothing: the last round, which sends every batch again.
        case none
    }

    /// The rounds. Lanes resend a batch until it is acknowledged while their collector runs, so
    /// the round that kills ClickHouse alone acknowledges the rest, and goes before the last.
    static let plan: [Kill] = [.collector, .both, .collector, .clickHouse, .none]

    @Test func everyEventIsStoredOnceAfterKillsAndResends() async throws {
        let database = try await PostgresTestEnvironment.createDatabase()
        do {
            let clickHouse = try await PrivateClickHouse.start()
            try await Self.run(database: database.url, clickHouse: clickHouse)
            await clickHouse.kill()
        } catch {
            await PostgresTestEnvironment.drop(database.name)
            throw error
        }
        await PostgresTestEnvironment.drop(database.name)
    }

    /// Numbers that tasks add to and read.
    final class Progress: Sendable {
        /// The acknowledged batches.
        let batches = Mutex(Set<Int>())
        /// The lanes that finished their round.
        let lanes = Mutex(0)
        /// Whether ClickHouse is killed alone (``Kill/clickHouse``) and not started again yet.
        let clickHouseDown = Mutex(false)
        /// The `503`s with `Retry-After` answered meanwhile.
        let unavailable = Mutex(0)
        /// The `503`s without `Retry-After`.
        let withoutRetryAfter = Mutex(0)
        /// Acknowledged batches when ClickHouse was killed alone, and when it was started again.
        let atClickHouseKill = Mutex(0)
        let atClickHouseRestart = Mutex(0)

        var acknowledged: Int { batches.withLock { $0.count } }
    }

    static func run(database: String, clickHouse: PrivateClickHouse) async throws {
        let events = clickHouse.url
        let directory = try TemporaryDirectory(prefix: "collector-clickhouse-kill")
        let batches = (0..<batchCount).map { batch in
            TestMessages.batch(
                (0..<batchSize).map { TestMessages.track("e", id: "kill-\(batch)-\($0)", session: "s\(batch % 5)") })
        }
        let progress = Progress()
        var collectorKills = 0
        var clickHouseKills = 0
        var acknowledgedBeforeLast = 0
        var acknowledgedBeforeClickHouseRound = 0
        for kill in plan {
            let isLast = kill == .none
            if isLast {
                acknowledgedBeforeLast = progress.acknowledged
                // Before anything is sent again: every acknowledged event is in ClickHouse, once.
                #expect(acknowledgedBeforeLast == batchCount)
                let stored = try await storedCounts(events)
                #expect(stored.rows == batchCount * batchSize)
                #expect(stored.ids == batchCount * batchSize)
            }
            if kill == .clickHouse { acknowledgedBeforeClickHouseRound = progress.acknowledged }
            let collector = try await CollectorProcess.start([
                "--data", directory.path, "--database", database, "--events", events.description,
                "--write-key", writeKey, "--admin-token", adminToken,
            ])
            let client = LiveClient(port: collector.port)
            // The last round sends every batch again; the others what is not acknowledged yet.
            let pending = (0..<batchCount).filter { isLast || !progress.batches.withLock { $0 }.contains($0) }
            let before = progress.acknowledged
            let lanesDone = Progress()
            // Each answer and each lane's end, for the killer to wait on.
            let (changes, change) = AsyncStream.makeStream(of: Void.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<4 {
                    group.addTask {
                        for batch in pending where batch % 4 == lane {
                            // Sent until acknowledged while the collector runs: after `Retry-After`
                            // when answered 503, after a short pause when the connection failed.
                            // One whose collector was killed waits for the next round.
                            while collector.process.isRunning {
                                guard let response = try? await client.postBatch(batches[batch], writeKey: writeKey)
                                else {
                                    try await Task.sleep(for: .milliseconds(20))
                                    continue
                                }
                                if response.status == 200 {
                                    progress.batches.withLock { _ = $0.insert(batch) }
                                    change.yield()
                                    break
                                }
                                guard response.status == 503 else {
                                    throw TestFailure("batch \(batch): HTTP \(response.status) \(response.text)")
                                }
                                let wait = response.headers["retry-after"].flatMap { Int($0) }
                                if wait == nil { progress.withoutRetryAfter.withLock { $0 += 1 } }
                                if wait != nil && progress.clickHouseDown.withLock({ $0 }) {
                                    progress.unavailable.withLock { $0 += 1 }
                                }
                                change.yield()
                                try await Task.sleep(for: .seconds(wait ?? 1))
                            }
                        }
                        lanesDone.lanes.withLock { $0 += 1 }
                        change.yield()
                    }
                }
                if !isLast {
                    group.addTask {
                        var iterator = changes.makeAsyncIterator()
                        func wait(until condition: () -> Bool) async {
                            while !condition() && lanesDone.lanes.withLock({ $0 }) < 4 {
                                guard await iterator.next() != nil else { return }
                            }
                        }
                        await wait { progress.acknowledged >= min(before + 4, batchCount) }
                        if kill == .clickHouse { progress.atClickHouseKill.withLock { $0 = progress.acknowledged } }
                        if kill != .collector { await clickHouse.kill() }
                        if kill == .clickHouse { progress.clickHouseDown.withLock { $0 = true } }
                        if kill != .clickHouse { collector.process.send(SIGKILL) }
                        if kill == .clickHouse {
                            // Down until the collector answered a request 503 for it.
                            await wait { progress.unavailable.withLock { $0 } > 0 }
                            progress.atClickHouseRestart.withLock { $0 = progress.acknowledged }
                            progress.clickHouseDown.withLock { $0 = false }
                            try await clickHouse.restart()
                        }
                    }
                }
                try await group.waitForAll()
            }
            switch kill {
            case .none:
                #expect(progress.acknowledged == batchCount)
                #expect(try await client.count(adminToken: adminToken) == batchCount * batchSize)
                #expect(try await collector.terminate() == 0)
            case .clickHouse:
                clickHouseKills += 1
                #expect(try await collector.terminate() == 0)
            case .both:
                clickHouseKills += 1
                collectorKills += 1
                _ = await collector.process.exit()
                try await clickHouse.restart()
            case .collector:
                collectorKills += 1
                _ = await collector.process.exit()
            }
        }
        #expect(collectorKills == 3)
        #expect(clickHouseKills == 2)
        // ClickHouse was killed alone mid-ingest: batches acknowledged in that round before the
        // kill and after the restart, and requests answered 503 (with `Retry-After`) meanwhile.
        #expect(progress.atClickHouseKill.withLock { $0 } > acknowledgedBeforeClickHouseRound)
        #expect(progress.acknowledged > progress.atClickHouseRestart.withLock { $0 })
        #expect(progress.unavailable.withLock { $0 } > 0)
        #expect(progress.withoutRetryAfter.withLock { $0 } == 0)

        let stored = try await storedCounts(events)
        // The last round sent every batch again: each message acknowledged before it is a resent one.
        let resent = try await query(
            events,
            "SELECT uniqExact(message_id) AS n FROM \(identifier: ClickHouseEvents.resentTable) WHERE source = 'default'"
        )
        #expect(stored.rows == batchCount * batchSize)
        #expect(stored.ids == batchCount * batchSize)
        #expect(acknowledgedBeforeLast > 0)
        #expect((resent.first?["n"]?.intValue ?? 0) >= acknowledgedBeforeLast * batchSize)
    }

    /// The rows ClickHouse's reads find and their distinct message ids, read as the insights read:
    /// without `FINAL`, the resent messages kept once.
    static func storedCounts(_ events: ClickHouseURL) async throws -> (rows: Int, ids: Int) {
        let rows = try await query(
            events,
            """
            SELECT count() AS n, uniqExact(message_id) AS ids
            FROM (\(ClickHouseEvents.select("message_id", source: "default", where: [])))
            """)
        return (rows.first?["n"]?.intValue ?? -1, rows.first?["ids"]?.intValue ?? -1)
    }

    /// The rows of one query, its client closed also when it fails.
    static func query(_ events: ClickHouseURL, _ sql: ClickHouseSQL) async throws -> [[String: JSONValue]] {
        let client = ClickHouseClient(url: events, logger: PostgresTestEnvironment.logger)
        do {
            let rows = try await client.rows(sql)
            await client.close()
            return rows
        } catch {
            await client.close()
            throw error
        }
    }
}
