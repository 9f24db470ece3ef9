import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// `/health/live` answers while the process does; `/health/ready` only while the database answers
/// with this collector's schema; `/health` as before.
struct HealthProbeTests {
    @Test func aHealthyCollectorIsLiveAndReady() async throws {
        try await RouterHarness.run { client, _ async throws in
            let live = try await client.execute(uri: "/health/live", method: .get)
            #expect(live.status == .ok)
            let ready = try await client.execute(uri: "/health/ready", method: .get)
            #expect(ready.status == .ok)
            #expect(try ready.json["status"] == "ready")
            #expect(try ready.json["schema"] == .int(SchemaMigrations.latestVersion))
        }
    }

    @Test func aSchemaThatIsNotThisCollectorsIsNotReady() async throws {
        try await RouterHarness.run { client, services async throws in
            _ = try await services.storage.schemaVersion()
            let sql = services.storage as? SQLCollectorStorage
            _ = try await sql?.backend.writeStatement(
                "DELETE FROM schema_migrations WHERE version = \(SchemaMigrations.latestVersion)", [])
            let ready = try await client.execute(uri: "/health/ready", method: .get)
            #expect(ready.status == .serviceUnavailable)
            #expect(
                try ready.json["error"]
                    == .string(
                        "the schema is at version \(SchemaMigrations.versions(from: 1).dropLast().last ?? 0), this collector needs \(SchemaMigrations.latestVersion)"
                    ))
            #expect(try await client.execute(uri: "/health/live", method: .get).status == .ok)
        }
    }

    @Test func whenTheDatabaseIsDownTheCollectorIsLiveButNotReady() async throws {
        try await RouterHarness.run { client, services async throws in
            try await services.storage.close()
            let ready = try await client.execute(uri: "/health/ready", method: .get)
            #expect(ready.status == .serviceUnavailable)
            #expect(try ready.json["error"] == "the database does not answer")
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(health.status == .serviceUnavailable)
            let live = try await client.execute(uri: "/health/live", method: .get)
            #expect(live.status == .ok)
        }
    }

    @Test(arguments: StorageKind.available)
    func aRunningCollectorAnswersTheProbesAsItsDatabaseDoes(kind: StorageKind) async throws {
        let directory = try TemporaryDirectory(prefix: "probes")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url)
        configuration.logger.logLevel = .critical
        var database: String?
        if kind == .postgres {
            let created = try await PostgresTestEnvironment.createDatabase()
            configuration.databaseURL = created.url
            database = created.name
        }
        let collector = try await CollectorServer(configuration: configuration).start()
        let client = LiveClient(port: collector.port)
        do {
            #expect(try await client.send(method: "GET", path: "/health/ready").status == 200)
            // The database goes away under the running collector.
            try await collector.services.storage.close()
            let ready = try await client.send(method: "GET", path: "/health/ready")
            #expect(ready.status == 503)
            #expect(ready.text.contains("the database does not answer"))
            #expect(try await client.send(method: "GET", path: "/health/live").status == 200)
        } catch {
            try? await collector.shutdown()
            if let database { await PostgresTestEnvironment.drop(database) }
            throw error
        }
        try? await collector.shutdown()
        if let database { await PostgresTestEnvironment.drop(database) }
    }
}
