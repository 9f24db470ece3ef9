/// Counters of what an ``EventRecorder`` did since it was created, for health checks and tests.
public struct RecorderStatistics: Sendable, Hashable {
    /// Events recorded (written to the log or, while the disk refuses writes, buffered).
    public var recorded = 0
    /// Events rejected because their line exceeded ``EventRecorderConfiguration/maximumEventBytes``.
    public var rejectedOversized = 0
    /// Writes the disk refused (full disk, unwritable directory, …).
    public var writeFailures = 0
    /// Events now waiting in memory for the disk to accept writes.
    public var bufferedInMemory = 0
    /// Events dropped because the memory buffer was full while the disk refused writes.
    public var droppedFromBuffer = 0
    /// Bytes of torn final lines cut off when a log was reopened.
    public var repairedTornBytes: Int64 = 0
    /// Damaged lines skipped while reading the log.
    public var damagedLinesSkipped = 0
    /// Events a consumer recorded from inside its callback beyond the nesting limit, dropped.
    public var droppedReentrant = 0
    /// Events not recorded because the user opted out (``EventRecorder/optOut(discardingPending:)``).
    public var refusedOptedOut = 0

    public init() {}
}
