import Foundation

/// What a ``RemoteResource`` holds at one moment: the value, how the last refresh went, and
/// when it will try again.
public struct RemoteResourceSnapshot<Value: Sendable>: Sendable {
    /// The current value: the last body that decoded and validated, from the network or the
    /// disk cache; nil when there has never been one.
    public var value: Value?
    /// How the latest refresh ended; nil before the first.
    public var outcome: RemoteResourceOutcome?
    /// Why the latest refresh failed; nil after a success (`200`, `304` or a fresh cache).
    public var lastError: RemoteResourceError?
    /// A cache file that was unreadable, no longer decoded, or could not be written.
    public var cacheError: RemoteResourceError?
    /// The entity tag of the current value, sent back as `If-None-Match`.
    public var etag: String?
    /// When the server last confirmed the current value (`200` or `304`).
    public var fetchedAt: Date?
    /// While failures cool down, the earliest time of the next request; nil otherwise.
    public var nextAttempt: Date?
    /// Refresh failures since the last success.
    public var consecutiveFailures: Int

    /// Creates a snapshot.
    public init(
        value: Value? = nil,
        outcome: RemoteResourceOutcome? = nil,
        lastError: RemoteResourceError? = nil,
        cacheError: RemoteResourceError? = nil,
        etag: String? = nil,
        fetchedAt: Date? = nil,
        nextAttempt: Date? = nil,
        consecutiveFailures: Int = 0
    ) {
        self.value = value
        self.outcome = outcome
        self.lastError = lastError
        self.cacheError = cacheError
        self.etag = etag
        self.fetchedAt = fetchedAt
        self.nextAttempt = nextAttempt
        self.consecutiveFailures = consecutiveFailures
    }
}

extension RemoteResourceSnapshot: Equatable where Value: Equatable {}
