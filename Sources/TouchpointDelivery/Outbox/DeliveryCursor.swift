import Foundation

/// A position in the local log: what a destination's collector has acknowledged so far.
///
/// The log is the outbox: events are never copied into a second queue. A cursor names a session
/// by its entry in the session journal (`state/sessions.jsonl`) and a byte offset in that
/// session's `events.jsonl`; everything before it has been delivered (or deliberately dropped),
/// everything after it is pending. Sessions follow each other in journal order, so comparing two
/// cursors compares positions in the whole log.
public struct DeliveryCursor: Sendable, Hashable, CustomStringConvertible {
    /// The byte offset of the session's entry in the session journal.
    public var journalOffset: Int64
    /// The session the entry names, once the cursor has reached it (nil at the very start).
    public var sessionId: UUID?
    /// The byte offset in the session's `events.jsonl` just past the last delivered line.
    public var eventOffset: Int64

    /// Creates a cursor.
    /// - Parameters:
    ///   - journalOffset: the session's entry in the journal.
    ///   - sessionId: the session that entry names.
    ///   - eventOffset: the byte offset in its `events.jsonl`.
    public init(journalOffset: Int64, sessionId: UUID?, eventOffset: Int64) {
        self.journalOffset = journalOffset
        self.sessionId = sessionId
        self.eventOffset = eventOffset
    }

    /// The start of the log: nothing delivered yet.
    public static let start = DeliveryCursor(journalOffset: 0, sessionId: nil, eventOffset: 0)

    /// Whether this cursor is at `other` or past it in the log: a later session, or the same
    /// session at the same or a later byte.
    public func hasReached(_ other: DeliveryCursor) -> Bool {
        (journalOffset, eventOffset) >= (other.journalOffset, other.eventOffset)
    }

    public var description: String {
        "journal@\(journalOffset) session \(sessionId?.uuidString ?? "-") byte \(eventOffset)"
    }
}
