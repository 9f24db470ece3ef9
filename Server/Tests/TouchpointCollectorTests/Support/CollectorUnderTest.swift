import Foundation
import Logging
import TouchpointTesting

@testable import TouchpointCollector

/// A real collector for one test, on a free port of 127.0.0.1 with warnings only in its log; shut
/// down after `body`, whether it throws or not. (``TouchpointTesting/TestCollector`` is another
/// thing: a Segment-style endpoint for testing the SDK's delivery.)
enum CollectorUnderTest {
    /// Runs `body` against a collector over a fresh data directory, deleted afterwards.
    /// - Parameters:
    ///   - prefix: the start of the data directory's name.
    ///   - configure: changes to the collector's configuration.
    static func run<Result: Sendable>(
        prefix: String, configure: (inout CollectorConfiguration) -> Void = { _ in },
        _ body: (RunningCollector) async throws -> Result
    ) async throws -> Result {
        let directory = try TemporaryDirectory(prefix: prefix)
        defer { withExtendedLifetime(directory) {} }
        return try await run(data: directory.url, configure: configure, body)
    }

    /// Runs `body` against a collector over `data`, which is kept after it stops (for backups and
    /// restores, and for starting another collector over the same data).
    static func run<Result: Sendable>(
        data: URL, configure: (inout CollectorConfiguration) -> Void = { _ in },
        _ body: (RunningCollector) async throws -> Result
    ) async throws -> Result {
        var configuration = CollectorConfiguration(port: 0, dataDirectory: data)
        configuration.logger.logLevel = .warning
        configure(&configuration)
        return try await CollectorServer(configuration: configuration).withRunning(body)
    }
}
