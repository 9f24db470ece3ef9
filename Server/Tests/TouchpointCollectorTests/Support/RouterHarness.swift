import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// A collector's router over a fresh SQLite database, driven by HummingbirdTesting.
enum RouterHarness {
    static let writeKey = "test-write-key"
    static let adminToken = "test-admin-token"

    /// Runs `body` against a collector router.
    /// - Parameter insights: an engine the insights ask instead of the storage's.
    static func run(
        _ setup: TestingSetup = .router, storage kind: StorageKind = .sqlite,
        configure: (inout CollectorConfiguration) -> Void = { _ in }, insights: (any InsightEngine)? = nil,
        _ body: @Sendable (any TestClientProtocol, CollectorServices) async throws -> Void
    ) async throws {
        try await runWithRoutes(setup, storage: kind, configure: configure, insights: insights) { client, services, _ in
            try await body(client, services)
        }
    }

    /// Runs `body` against a collector router, with the routes the collector added and their access.
    static func runWithRoutes(
        _ setup: TestingSetup = .router, storage kind: StorageKind = .sqlite,
        configure: (inout CollectorConfiguration) -> Void = { _ in }, insights: (any InsightEngine)? = nil,
        _ body: @Sendable (any TestClientProtocol, CollectorServices, [CollectorRoute]) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "collector-router")
        var configuration = CollectorConfiguration(
            dataDirectory: directory.url, writeKey: writeKey, adminToken: adminToken,
            additionalSources: [CollectorSource(id: "web", writeKey: "web-key")])
        configuration.logger.logLevel = .warning
        configure(&configuration)
        guard kind == .sqlite else {
            // The same router over a fresh PostgreSQL database.
            try await TestDatabase.with(kind) { database in
                try await run(setup, storage: try await database.storage(), configuration, insights, body)
            }
            return
        }
        let storage = try await SQLCollectorStorage.sqlite(
            path: directory.appending("touchpoint.sqlite").path, logger: configuration.logger)
        try await run(setup, storage: storage, configuration, insights, body)
    }

    private static func run(
        _ setup: TestingSetup, storage: SQLCollectorStorage, _ configuration: CollectorConfiguration,
        _ insights: (any InsightEngine)?,
        _ body: @Sendable (any TestClientProtocol, CollectorServices, [CollectorRoute]) async throws -> Void
    ) async throws {
        let services = CollectorServices(
            storage: storage,
            credentials: CollectorCredentials(writeKey: writeKey, adminToken: adminToken),
            additionalSources: configuration.additionalSources, configuration: configuration, insights: insights)
        let (router, routes) = CollectorRouter.build(services: services, extraRoutes: configuration.routes)
        let application = Application(router: router, logger: configuration.logger)
        do {
            try await services.prepare(logger: configuration.logger)
            try await application.test(setup) { client in try await body(client, services, routes) }
            try await storage.close()
        } catch {
            try? await storage.close()
            throw error
        }
    }
}

extension TestResponse {
    /// The body as JSON.
    var json: JSONValue {
        get throws { try JSONParser.parse(Array(buffer: body)) }
    }
}

extension HTTPFields {
    static func basic(_ key: String) -> HTTPFields {
        var fields = HTTPFields()
        fields[.authorization] = TestMessages.basic(key)
        return fields
    }

    static func bearer(_ token: String) -> HTTPFields {
        var fields = HTTPFields()
        fields[.authorization] = "Bearer \(token)"
        return fields
    }
}

extension ByteBuffer {
    init(json: [UInt8]) { self.init(bytes: json) }
}
