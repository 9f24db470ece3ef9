import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// Real `touchpoint serve` processes: signals, and several collectors on one PostgreSQL.
struct ProcessTests {
    @Test func serveStopsGracefullyOnSIGTERMAndKeepsWhatItAcknowledged() async throws {
        let directory = try TemporaryDirectory(prefix: "collector-process")
        let collector = try await CollectorProcess.start([
            "--data", directory.path, "--write-key", "process-key-0123456789", "--admin-token",
            "process-token-0123456789",
        ])
        #expect(collector.text.contains("write key:   process-key"))
        #expect(collector.text.contains("admin token: process-token"))
        #expect(collector.text.contains("SQLite at \(directory.path)"))
        let response = try await LiveClient(port: collector.port).postBatch(
            TestMessages.batch((0..<100).map { TestMessages.track("e", id: "p\($0)") }),
            writeKey: "process-key-0123456789")
        #expect(response.status == 200)
        #expect(try await collector.terminate() == 0)

        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending(CollectorConfiguration.sqliteFileName).path,
            logger: PostgresTestEnvironment.logger)
        #expect(try await storage.counts(source: "default").events == 100)
        try await storage.close()
    }

    @Test(.enabled(if: PostgresTestEnvironment.enabled, "needs TOUCHPOINT_TEST_POSTGRES_URL"))
    func twoCollectorsOnOnePostgresStoreABatchOnce() async throws {
        let database = try await PostgresTestEnvironment.createDatabase()
        let directories = try (0..<2).map { _ in try TemporaryDirectory(prefix: "collector-scale") }
        var collectors: [CollectorProcess] = []
        do {
            for directory in directories {
                // Collectors of one database share the key deleted ids are hashed with.
                try AtomicFile.write(
                    Array(#"{"suppressionKey":"\#(String(repeating: "c4", count: 32))"}"#.utf8),
                    to: directory.appending(CollectorCredentials.fileName).path, mode: 0o600)
                collectors.append(
                    try await CollectorProcess.start([
                        "--data", directory.path, "--database", database.url, "--write-key", "shared-key-0123456789",
                        "--admin-token", "shared-token-0123456789",
                    ]))
            }
            let body = TestMessages.batch(
                (0..<500).map { TestMessages.track("e", id: "scale-\($0)", session: "s\($0 % 10)") })
            let clients = collectors.map { LiveClient(port: $0.port) }
            // The same batch to both at once, then again to each.
            let concurrent = try await withThrowingTaskGroup(of: JSONValue.self) { group in
                for client in clients {
                    group.addTask {
                        try JSONParser.parse(try await client.postBatch(body, writeKey: "shared-key-0123456789").body)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(concurrent.compactMap { $0["accepted"]?.intValue }.reduce(0, +) == 500)
            #expect(concurrent.compactMap { $0["duplicates"]?.intValue }.reduce(0, +) == 500)
            for client in clients {
                let again = try JSONParser.parse(
                    try await client.postBatch(body, writeKey: "shared-key-0123456789").body)
                #expect(again["duplicates"] == 500)
            }
            for client in clients {
                #expect(try await client.count(adminToken: "shared-token-0123456789") == 500)
            }
            for collector in collectors { #expect(try await collector.terminate() == 0) }
        } catch {
            for collector in collectors where collector.process.isRunning { _ = try? await collector.terminate() }
            await PostgresTestEnvironment.drop(database.name)
            throw error
        }
        await PostgresTestEnvironment.drop(database.name)
    }
}
