import Foundation
import Testing
import TouchpointTesting

@testable import TouchpointCollector

/// ClickHouse for tests: used when `TOUCHPOINT_TEST_CLICKHOUSE_URL` is set (its HTTP interface,
/// `http://127.0.0.1:8123`); when `TOUCHPOINT_REQUIRE_CLICKHOUSE=1` is set (CI), a missing or
/// unreachable server fails the tests.
enum ClickHouseTestEnvironment {
    static var url: String? { ProcessInfo.processInfo.environment["TOUCHPOINT_TEST_CLICKHOUSE_URL"] }
    static var required: Bool { ProcessInfo.processInfo.environment["TOUCHPOINT_REQUIRE_CLICKHOUSE"] == "1" }
    static var enabled: Bool { url != nil || required }

    /// A fresh, empty database for one test, dropped afterwards (also when `body` throws).
    static func withDatabase(_ body: (ClickHouseClient) async throws -> Void) async throws {
        try await withDatabaseURL { url in
            let client = ClickHouseClient(url: url, logger: PostgresTestEnvironment.logger)
            do {
                try await body(client)
            } catch {
                await client.close()
                throw error
            }
            await client.close()
        }
    }

    /// A fresh, empty database for one test, named by its URL, dropped afterwards (also when
    /// `body` throws).
    static func withDatabaseURL(_ body: (ClickHouseURL) async throws -> Void) async throws {
        guard let text = url else {
            throw TestFailure("TOUCHPOINT_REQUIRE_CLICKHOUSE=1 but TOUCHPOINT_TEST_CLICKHOUSE_URL is not set")
        }
        let server = try ClickHouseURL(text)
        let name = "touchpoint_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        let admin = ClickHouseClient(url: server.with(database: "default"), logger: PostgresTestEnvironment.logger)
        do {
            try await admin.execute("CREATE DATABASE \(identifier: name)")
        } catch {
            await admin.close()
            throw TestFailure("ClickHouse at \(server) is required for this test and unreachable: \(error)")
        }
        do {
            try await body(server.with(database: name))
        } catch {
            try? await admin.execute("DROP DATABASE IF EXISTS \(identifier: name)")
            await admin.close()
            throw error
        }
        try? await admin.execute("DROP DATABASE IF EXISTS \(identifier: name)")
        await admin.close()
    }
}
