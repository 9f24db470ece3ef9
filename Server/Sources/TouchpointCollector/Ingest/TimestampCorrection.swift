/// Segment's clock-skew correction: a device clock may be wrong, but the time between recording an
/// event and sending it is right, so the event happened at `receivedAt − (sentAt − timestamp)`.
public enum TimestampCorrection {
    /// The corrected time of an event, in milliseconds since 1970.
    /// - Parameters:
    ///   - timestamp: the event's own time (device clock), when it had one.
    ///   - sentAt: when the device sent the request (device clock), when it said.
    ///   - receivedAt: when the collector received the request (collector clock).
    /// - Returns: `receivedAt − (sentAt − timestamp)` when both are known; `timestamp` without
    ///   `sentAt`; `receivedAt` without `timestamp`.
    public static func corrected(timestamp: Int64?, sentAt: Int64?, receivedAt: Int64) -> Int64 {
        guard let timestamp else { return receivedAt }
        guard let sentAt else { return timestamp }
        let (delay, overflow) = sentAt.subtractingReportingOverflow(timestamp)
        if overflow { return timestamp }
        let (corrected, overflow2) = receivedAt.subtractingReportingOverflow(delay)
        return overflow2 ? timestamp : corrected
    }
}
