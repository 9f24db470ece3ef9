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
    func run(_ body: (any StoreBackendAdapter) async throws -> Void) async throws {
        switch self {
        case .inMemory:
            try await body(InMemoryStoreBackend())
        case .http:
            let collector = try await LiveCollector.start()
            do {
                try await body(
                    HTTPStoreBackend(
                        collector: collector.baseURL, writeKey: collector.writeKey, user: LiveCollector.user("contract")
                    ))
            } catch {
                try? await collector.stop()
                throw error
            }
            try await collector.stop()
        }
    }
}
