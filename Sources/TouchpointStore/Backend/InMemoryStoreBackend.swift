import TouchpointCore

/// A ``StoreBackendAdapter`` that keeps documents in memory with the collector's ETag semantics:
/// ETags count pushes (`"1"`, `"2"`, …), a push whose precondition does not hold is a conflict.
///
/// Useful for tests, previews and apps without a server; several stores can share one to play
/// several devices.
public final class InMemoryStoreBackend: StoreBackendAdapter {
    private struct Key: Hashable {
        let namespace: String
        let scenarioID: String?
    }

    private let documents = Locked<[Key: (values: [String: StoreValue], version: Int)]>([:])

    /// Creates an empty backend.
    public init() {}

    /// The stored document, or nil.
    public func pull(namespace: String, scenarioID: String?) async throws -> StoreBackendDocument? {
        document(namespace: namespace, scenarioID: scenarioID)
    }

    /// The stored document, or nil, without `await`.
    public func document(namespace: String, scenarioID: String?) -> StoreBackendDocument? {
        documents.withLock { documents in
            documents[Key(namespace: namespace, scenarioID: scenarioID)].map {
                StoreBackendDocument(values: $0.values, etag: "\"\($0.version)\"")
            }
        }
    }

    /// Stores `values` when the precondition holds.
    /// - Throws: ``StoreError`` with ``StoreError/Code/conflict`` when it does not.
    public func push(
        _ values: [String: StoreValue], namespace: String, scenarioID: String?,
        precondition: StoreBackendPrecondition
    ) async throws -> String {
        let key = Key(namespace: namespace, scenarioID: scenarioID)
        return try documents.withLock { documents throws(StoreError) in
            let current = documents[key]
            switch (precondition, current) {
            case (.ifAbsent, nil):
                break
            case (.ifAbsent, let current?):
                throw StoreError(
                    .conflict, keyPath: "\(namespace)/\(scenarioID ?? "-")",
                    "the document already exists (ETag \"\(current.version)\"); pull it first")
            case (.ifMatch(let etag), let current?) where etag == "\"\(current.version)\"":
                break
            case (.ifMatch(let etag), let current):
                throw StoreError(
                    .conflict, keyPath: "\(namespace)/\(scenarioID ?? "-")",
                    "expected ETag \(etag), the server has \(current.map { "\"\($0.version)\"" } ?? "no document")")
            }
            let version = (current?.version ?? 0) + 1
            documents[key] = (values, version)
            return "\"\(version)\""
        }
    }
}
