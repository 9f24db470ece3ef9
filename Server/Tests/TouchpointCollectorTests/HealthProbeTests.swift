import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TouchpointCore

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
                        "the schema is at version \(SchemaMigrations.latestVersion - 1), this collector needs \(SchemaMigrations.latestVersion)"
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
}
