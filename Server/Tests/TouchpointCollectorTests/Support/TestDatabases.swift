import Foundation
import Logging
import Testing
import TouchpointTesting

@testable import TouchpointCollector

/// PostgreSQL for tests: used when `TOUCHPOINT_TEST_POSTGRES_URL` is set; when
/// `TOUCHPOINT_REQUIRE_POSTGRES=1` is set (CI), a missing or unreachable database fails the tests.
enum PostgresTestEnvironment {
    static var url: String? { ProcessInfo.processInfo.environment["TOUCHPOINT_TEST_POSTGRES_URL"] }
    static var required: Bool { ProcessInfo.processInfo.environment["TOUCHPOINT_REQUIRE_POSTGRES"] == "1" }
    static var enabled: Bool { url != nil || required }

    static let logger: Logger = {
        var logger = Logger(label: "touchpoint.collector.tests")
        logger.logLevel = .warning
        return logger
    }()

    /// A fresh, empty database for one test; dropped by ``drop(_:)``.
    /// - Returns: the database's URL and name.
    static func createDatabase() async throws -> (url: String, name: String) {
        guard let adminURL = url else {
            throw TestFailure("TOUCHPOINT_REQUIRE_POSTGRES=1 but TOUCHPOINT_TEST_POSTGRES_URL is not set")
        }
        let name = "touchpoint_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        let admin: PostgresBackend
        do {
            admin = try await PostgresBackend.open(url: adminURL, maximumConnections: 1, logger: logger)
        } catch {
            throw TestFailure("PostgreSQL at \(adminURL) is required for this test and unreachable: \(error)")
        }
        do {
            _ = try await admin.query("CREATE DATABASE \(name)", [])
        } catch {
            try? await admin.close()
            throw error
        }
        try await admin.close()
        guard var components = URLComponents(string: adminURL) else { throw TestFailure("bad URL \(adminURL)") }
        components.path = "/" + name
        return (components.string!, name)
    }

    static func drop(_ name: String) async {
        guard let adminURL = url,
            let admin = try? await PostgresBackend.open(url: adminURL, maximumConnections: 1, logger: logger)
        else { return }
        _ = try? await admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", [])
        try? await admin.close()
    }
}

/// The storage backends the shared suite runs against.
enum StorageKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    /// SQLite always; PostgreSQL when configured (or required).
    static var available: [StorageKind] { PostgresTestEnvironment.enabled ? [.sqlite, .postgres] : [.sqlite] }

    var testDescription: String { rawValue }
}

/// Runs `body` with a fresh, empty storage of `kind`, closed and deleted afterwards.
func withStorage(
    _ kind: StorageKind, _ body: (SQLCollectorStorage) async throws -> Void
) async throws {
    switch kind {
    case .sqlite:
        let directory = try TemporaryDirectory(prefix: "collector-sqlite")
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: PostgresTestEnvironment.logger)
        do {
            try await body(storage)
            try await storage.close()
        } catch {
            try? await storage.close()
            throw error
        }
    case .postgres:
        let database = try await PostgresTestEnvironment.createDatabase()
        do {
            let storage = try await SQLCollectorStorage.postgres(
                url: database.url, maximumConnections: 4, logger: PostgresTestEnvironment.logger)
            do {
                try await body(storage)
                try await storage.close()
                await PostgresTestEnvironment.drop(database.name)
            } catch {
                try? await storage.close()
                throw error
            }
        } catch {
            await PostgresTestEnvironment.drop(database.name)
            throw error
        }
    }
}
