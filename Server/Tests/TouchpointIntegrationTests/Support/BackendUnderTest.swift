import Foundation
import TouchpointCore
import TouchpointStore

/// The ``StoreBackendAdapter`` implementations that must keep one contract.
enum BackendKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// ``InMemoryStoreBackend``.
    case inMemory
    /// ``HTTPStoreBackend`` against a real collector on 127.0.0.1 (SQLite in a temporary directory),
    /// keeping one signed-in user's documents (the write key alone may not write).
    case http

    var description: String { rawValue }

    /// Runs `body` with a fresh backend of this kind; a collector it needed is stopped afterwards.
    ///
    /// The HTTP backend waits up to two minutes for an answer (15 s by default): the whole suite
    /// runs in parallel on two cores, and a contract test is about the answer, not its time (one of
    /// eight concurrent pushes once waited longer than 15 s under the full suite).
    func run(_ body: (any StoreBackendAdapter) async throws -> Void) async throws {
        switch self {
        case .inMemory:
            try await body(InMemoryStoreBackend())
        case .http:
            let collector = try await LiveCollector.start()
            do {
                try await body(
                    HTTPStoreBackend(
                        collector: collector.baseURL, writeKey: collector.writeKey,
                        user: LiveCollector.user("contract"),
                        timeout: 120))
            } catch {
                try? await collector.stop()
                throw error
            }
            try await collector.stop()
        }
    }
}
