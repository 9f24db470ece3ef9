/// What a persistent scope's writer did since the store opened.
public struct PersistenceStatistics: Sendable, Hashable {
    /// Documents written (each one a whole-document replacement).
    public var writes = 0
    /// Writes that failed (they are retried later).
    public var failures = 0
    /// Flushes that found nothing new to write.
    public var skipped = 0

    /// Creates statistics.
    public init(writes: Int = 0, failures: Int = 0, skipped: Int = 0) {
        self.writes = writes
        self.failures = failures
        self.skipped = skipped
    }
}
