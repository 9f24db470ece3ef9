/// How much of the log is not delivered yet, measured in bytes of `events.jsonl` (counting
/// events would mean reading them all).
public struct DeliveryBacklog: Sendable, Hashable {
    /// Bytes of event lines past the cursor.
    public var bytes: Int64 = 0
    /// Sessions with events past the cursor.
    public var sessions = 0

    /// Creates an empty backlog.
    public init() {}
}
