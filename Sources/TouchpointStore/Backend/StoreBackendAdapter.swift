/// The server side of `backend(namespace:scenarioID:)` scopes: whole-document pull and push with
/// optimistic concurrency.
///
/// Every document has an opaque ETag that changes on every successful push. A push states what
/// it expects the server to hold (``StoreBackendPrecondition``); when the server holds something
/// else the push must fail with ``StoreError/Code/conflict`` and change nothing, so a stale
/// client never overwrites another's data.
///
/// The collector speaks this over HTTP as `GET`/`PUT /v1/scenario/{namespace}/{scenarioID}` (a
/// namespace's shared documents) and `/v1/users/{userId}/scenario/…` (a user's own)
/// (`ETag`, `If-Match`, `If-None-Match: *`; 404 absent, 412 stale, 428 without a precondition).
/// ``HTTPStoreBackend`` is the client for it; ``InMemoryStoreBackend`` implements the same
/// semantics in memory.
public protocol StoreBackendAdapter: Sendable {
    /// The server's document, or nil when it has none.
    /// - Throws: ``StoreError`` (``StoreError/Code/backendFailure``) or the transport's error.
    func pull(namespace: String, scenarioID: String?) async throws -> StoreBackendDocument?

    /// Replaces the server's document when it matches `precondition`.
    /// - Returns: the new ETag.
    /// - Throws: ``StoreError`` with ``StoreError/Code/conflict`` when the precondition does not
    ///   hold (nothing was written); ``StoreError/Code/backendFailure`` or the transport's error otherwise.
    func push(
        _ values: [String: StoreValue], namespace: String, scenarioID: String?,
        precondition: StoreBackendPrecondition
    ) async throws -> String
}

/// A backend document and the ETag it had when it was read.
public struct StoreBackendDocument: Sendable, Equatable {
    /// The values, by top-level key.
    public var values: [String: StoreValue]
    /// The document's version tag, opaque to the client.
    public var etag: String

    /// Creates a document.
    public init(values: [String: StoreValue], etag: String) {
        self.values = values
        self.etag = etag
    }
}

/// What a push expects the server to hold.
public enum StoreBackendPrecondition: Sendable, Hashable {
    /// The document with this ETag (HTTP `If-Match`).
    case ifMatch(String)
    /// No document at all: the push creates it (HTTP `If-None-Match: *`).
    case ifAbsent
}
