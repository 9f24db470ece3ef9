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
    /// PostgreSQL with the events in ClickHouse as well (`--events clickhouse://…`), which
    /// answers the insights that read events (``ClickHouseInsights``).
    case clickhouse

    /// SQLite always; PostgreSQL when configured (or required).
    static var available: [StorageKind] { PostgresTestEnvironment.enabled ? [.sqlite, .postgres] : [.sqlite] }

    /// The stores the insights' suites run against: ``available``, and PostgreSQL with
    /// ClickHouse when both are configured (or required).
    static var insightStores: [StorageKind] {
        available + (PostgresTestEnvironment.enabled && ClickHouseTestEnvironment.enabled ? [.clickhouse] : [])
    }

    var testDescription: String { rawValue }
}

/// Runs `body` with a fresh, empty storage of `kind`, closed and deleted afterwards.
func withStorage(
    _ kind: StorageKind, _ body: (SQLCollectorStorage) async throws -> Void
) async throws {
    try await TestDatabase.with(kind) { database in
        let storage = try await database.storage()
        do {
            try await body(storage)
            try await storage.close()
        } catch {
            try? await storage.close()
            throw error
        }
    }
}

/// A fresh, empty database of one kind for one test.
struct TestDatabase: Sendable {
    let kind: StorageKind
    /// The SQLite file's path, or PostgreSQL's URL.
    let location: String
    /// ClickHouse's database, for ``StorageKind/clickhouse``.
    var events: ClickHouseURL?

    /// Runs `body` with a fresh database of `kind`, deleted afterwards.
    static func with(_ kind: StorageKind, _ body: (TestDatabase) async throws -> Void) async throws {
        switch kind {
        case .sqlite:
            let directory = try TemporaryDirectory(prefix: "collector-sqlite")
            try await body(TestDatabase(kind: kind, location: directory.appending("touchpoint.sqlite").path))
        case .postgres, .clickhouse:
            let database = try await PostgresTestEnvironment.createDatabase()
            do {
                if kind == .clickhouse {
                    try await ClickHouseTestEnvironment.withDatabaseURL { events in
                        try await body(TestDatabase(kind: kind, location: database.url, events: events))
                    }
                } else {
                    try await body(TestDatabase(kind: kind, location: database.url))
                }
            } catch {
                await PostgresTestEnvironment.drop(database.name)
                throw error
            }
            await PostgresTestEnvironment.drop(database.name)
        }
    }

    /// Its connections, with no migration run: ``SchemaMigrations`` brings it to a version.
    func backend() async throws -> any SQLBackend {
        switch kind {
        case .sqlite: try await SQLiteBackend.open(path: location, logger: PostgresTestEnvironment.logger)
        case .postgres, .clickhouse:
            try await PostgresBackend.open(url: location, maximumConnections: 2, logger: PostgresTestEnvironment.logger)
        }
    }

    /// The database opened as a collector opens it, which runs the migrations it lacks.
    func storage(tuning: SQLiteTuning = .production) async throws -> SQLCollectorStorage {
        switch kind {
        case .sqlite:
            try await SQLCollectorStorage.sqlite(path: location, logger: PostgresTestEnvironment.logger, tuning: tuning)
        case .postgres:
            try await SQLCollectorStorage.postgres(
                url: location, maximumConnections: 4, logger: PostgresTestEnvironment.logger)
        case .clickhouse:
            try await SQLCollectorStorage.postgres(
                url: location, maximumConnections: 4,
                clickHouse: events.map {
                    ClickHouseEvents(client: ClickHouseClient(url: $0, logger: PostgresTestEnvironment.logger))
                },
                logger: PostgresTestEnvironment.logger)
        }
    }
}
