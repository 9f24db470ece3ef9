/// Moves a backend scope's values to and from the server, one operation at a time.
///
/// ```swift
/// let sync = store.backendSync(namespace: "acme", scenarioID: "checkout")
/// try await sync.pull()                 // the server's values replace the local ones
/// sync.store.set("cart.coupon", "SPRING")
/// try await sync.push()                 // If-Match the ETag from the pull
/// ```
///
/// A push after someone else's push fails with ``StoreError/Code/conflict`` and overwrites
/// nothing; the local values stay as they are, so the app can pull, re-apply and push again.
public actor StoreBackendSync {
    /// The backend scope's store.
    public nonisolated let store: ScopedStore
    private let adapter: (any StoreBackendAdapter)?
    private let namespace: String
    private let scenarioID: String?
    /// The ETag of the server's document as last seen; nil when the server had none.
    public private(set) var etag: String?

    init(store: ScopedStore, adapter: (any StoreBackendAdapter)?, namespace: String, scenarioID: String?) {
        self.store = store
        self.adapter = adapter
        self.namespace = namespace
        self.scenarioID = scenarioID
    }

    /// Fetches the server's document; when there is one, its values replace the local ones
    /// (validated like any write) and its ETag is remembered. When there is none, the local
    /// values stay and the next push creates the document.
    /// - Returns: whether the server had a document.
    /// - Throws: ``StoreError``: ``StoreError/Code/noBackendAdapter``, ``StoreError/Code/backendFailure``
    ///   (transport errors are wrapped), ``StoreError/Code/validationFailed`` (the local values are kept).
    @discardableResult
    public func pull() async throws(StoreError) -> Bool {
        let adapter = try requireAdapter()
        let document: StoreBackendDocument?
        do {
            document = try await adapter.pull(namespace: namespace, scenarioID: scenarioID)
        } catch {
            throw Self.wrap(error, "pull")
        }
        guard let document else {
            etag = nil
            return false
        }
        if case .failed(let reason) = store.replaceAll(with: document.values) {
            throw StoreError(.validationFailed, keyPath: "\(store.scope)", "pulled values rejected: \(reason)")
        }
        etag = document.etag
        return true
    }

    /// Sends the local values, expecting the server to hold what was last pulled or pushed
    /// (`If-Match`), or nothing (`If-None-Match: *`) when nothing was.
    /// - Throws: ``StoreError``: ``StoreError/Code/conflict`` when the server's copy changed
    ///   meanwhile (nothing is overwritten), ``StoreError/Code/noBackendAdapter``, ``StoreError/Code/backendFailure``.
    public func push() async throws(StoreError) {
        let adapter = try requireAdapter()
        let precondition: StoreBackendPrecondition = etag.map { .ifMatch($0) } ?? .ifAbsent
        do {
            etag = try await adapter.push(
                store.snapshot(), namespace: namespace, scenarioID: scenarioID, precondition: precondition)
        } catch {
            throw Self.wrap(error, "push")
        }
    }

    private func requireAdapter() throws(StoreError) -> any StoreBackendAdapter {
        guard let adapter else {
            throw StoreError(
                .noBackendAdapter, keyPath: "\(store.scope)", "no StoreBackendAdapter is configured for this store")
        }
        return adapter
    }

    private static func wrap(_ error: any Error, _ operation: String) -> StoreError {
        if let error = error as? StoreError { return error }
        return StoreError(.backendFailure, "\(operation) failed: \(error)")
    }
}
