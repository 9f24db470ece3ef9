import Foundation

/// What one read of the log produced: the messages of the next request and where they end.
struct OutboxBatch: Sendable, Hashable {
    /// The encoded messages, separated by commas, ready to go between `[` and `]`.
    var messages: [UInt8] = []
    /// The message ids, in order (for the collector's `rejected` indexes and for logs).
    var messageIds: [UUID] = []
    /// Where the read started: the acknowledged cursor.
    var start: DeliveryCursor
    /// Where the read stopped: just past the last line it consumed (sent, skipped or damaged).
    var end: DeliveryCursor
    /// Messages over the size limit, consumed but never sent.
    var oversized: [OversizedMessage] = []
    /// Whether the read stopped because the log had nothing more (rather than at a limit).
    var reachedEnd = false
    /// A file the read could not read, if any: the read stopped before it.
    var readError: String?

    init(start: DeliveryCursor) {
        self.start = start
        end = start
    }

    /// How many messages the batch holds.
    var count: Int { messageIds.count }

    /// The body size with its envelope, before compression.
    var bodySize: Int { messages.count + BatchEnvelope.overhead }

    /// A message that was too large to send.
    struct OversizedMessage: Sendable, Hashable {
        /// Its message id.
        var messageId: UUID
        /// Its encoded size.
        var bytes: Int
    }
}
