import Foundation
import Logging
import TouchpointTesting

@testable import TouchpointCollector

/// A real collector for one test: a fresh data directory, a free port on 127.0.0.1, warnings
/// only in the log; shut down after `body`, whether it throws or not.
enum TestCollector {
    static func run(
        prefix: String, configure: (inout CollectorConfiguration) -> Void = { _ in },
        _ body: (RunningCollector) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: prefix)
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url)
        configuration.logger.logLevel = .warning
        configure(&configuration)
        let collector = try await CollectorServer(configuration: configuration).start()
        do {
            try await body(collector)
        } catch {
            try? await collector.shutdown()
            throw error
        }
        try await collector.shutdown()
    }
}
