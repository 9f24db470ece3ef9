import Foundation
import TouchpointCore

extension DispatchStateMachine {
    /// What the dispatcher should do next.
    enum Action: Sendable, Equatable {
        /// Read the next batch from the log.
        case read(ReadOrder)
        /// Send the batch (the one upload in flight).
        case send(SendOrder)
        /// Nothing to do until `until` (nil: until an input arrives), for `reason`.
        case wait(until: Date?, reason: WaitReason)
    }

    /// Why the dispatcher is not sending: what debug mode logs.
    enum WaitReason: String, Sendable, Equatable {
        /// Delivery is disabled.
        case disabled = "delivery is disabled"
        /// The user opted out of recording: nothing is sent.
        case optedOut = "the user opted out"
        /// Everything recorded has been acknowledged.
        case nothingPending = "everything is delivered; waiting for new events"
        /// Interval > 0: waiting for the next timer tick.
        case timer = "waiting for the dispatch timer"
        /// Interval < 0: waiting for `dispatch()`.
        case manual = "manual dispatch: waiting for dispatch()"
        /// The reachability monitor says the device is offline.
        case offline = "the device is offline"
        /// Backing off after failures.
        case backoff = "backing off after failures"
        /// The per-minute request ceiling is reached.
        case rateLimit = "the request rate limit is reached"
        /// A read or an upload is under way.
        case busy = "an upload is in flight"
    }

    /// Read the log from `from` with `limits`; report the result with `token`.
    struct ReadOrder: Sendable, Equatable {
        var from: DeliveryCursor
        var limits: BatchLimits
        var token: Int
    }

    /// Send `batch`, compressed if `mayCompress` and it helps; report the result with `token`.
    struct SendOrder: Sendable, Equatable {
        var batch: OutboxBatch
        var mayCompress: Bool
        /// 1 for the first attempt of this batch.
        var attempt: Int
        var token: Int
    }

    /// What an input changed that the dispatcher must act on outside the machine.
    struct Effects: Sendable, Equatable {
        /// The persistent state changed: write the state file.
        var persist = false
        /// Dispatch calls that are now complete.
        var completed: [Completed] = []
        /// Dispatch calls that failed.
        var failed: [Failed] = []
        /// Things to log.
        var notes: [Note] = []

        struct Completed: Sendable, Equatable {
            var waiter: Int
            var report: DispatchReport
        }

        struct Failed: Sendable, Equatable {
            var waiter: Int
            var error: DeliveryError
        }
    }

    /// Something worth a log line.
    enum Note: Sendable, Equatable {
        /// A batch was acknowledged.
        case delivered(count: Int, attempt: Int)
        /// The collector acknowledged a batch but rejected some of its messages.
        case rejectedByCollector(messageIds: [UUID], reasons: [String])
        /// A batch (or one event) was dropped for good.
        case dropped(count: Int, first: UUID?, last: UUID?, reason: String)
        /// An event was larger than the limit and was never sent.
        case droppedOversized(messageId: UUID, bytes: Int, limit: Int)
        /// A batch answered 413 is sent again in smaller parts.
        case splitting(count: Int, into: Int)
        /// An attempt failed; the next one is in `delay` seconds.
        case retrying(delay: TimeInterval, failures: Int, reason: String)
        /// A compressed request was refused; the batch goes again uncompressed.
        case compressionRefused(reason: String)
        /// The log could not be read.
        case readFailed(reason: String)
        /// Connectivity came back: the backoff after network failures is cut short.
        case backOnline
    }

    /// A `dispatch()` call waiting for the collector to acknowledge what was pending.
    struct Waiter: Sendable, Equatable {
        /// Where the log ended when the call was made.
        var target: DeliveryCursor
        /// Reads started after this number began after the call: an empty one completes it.
        var readsBefore: Int
        /// Whether to fail at the first failure instead of waiting through retries.
        var failFast: Bool
        var deliveredBefore: Int
        var droppedBefore: Int
    }

    /// Where the pipeline is. At most one read or upload is out at a time (the read ahead of the
    /// batch in flight aside, which belongs to that batch).
    ///
    /// ```
    /// idle ──read──▶ reading ──a batch──▶ holding ──send──▶ uploading ──2xx, 413, 4xx──▶ idle
    ///   ▲               │ nothing to send     ▲                  │            (or holding the
    ///   └───────────────┘                     └── failed, ───────┘             batch read ahead)
    ///                                             cancelled, 400/415 gzip
    /// reading, uploading ──clear──▶ discarding(token) ──its result──▶ idle
    /// ```
    enum Phase: Sendable, Equatable {
        /// No batch is held and no read is out.
        case idle
        /// A read of the next batch is out.
        case reading(PendingRead)
        /// A batch is held until its next attempt may go (offline, backing off, rate limited,
        /// or not yet wanted).
        case holding(InFlight)
        /// The held batch's upload is out; its answer is reported with `token`.
        case uploading(InFlight, token: Int)
        /// The log was cleared while the read or upload `token` was out: its result is ignored,
        /// and nothing new starts before it arrives.
        case discarding(token: Int)
    }

    /// A read in progress.
    struct PendingRead: Sendable, Equatable {
        var token: Int
        /// Which read this is: `dispatch()` calls made before it began are complete when it
        /// finds nothing left.
        var sequence: Int
        /// The count of new-data signals when it began: a signal since then means it may have
        /// missed an event.
        var signals: Int
    }

    /// The batch waiting to be acknowledged.
    struct InFlight: Sendable, Equatable {
        var batch: OutboxBatch
        /// Requests made for it so far.
        var attempts = 0
        /// Send it uncompressed (the collector refused a compressed request).
        var plainOnly = false
        /// The batch after it, read while its upload waits for an answer.
        var readAhead: ReadAhead?
    }

    /// The read of the batch after the one in flight.
    enum ReadAhead: Sendable, Equatable {
        /// Out, reported with `token`.
        case reading(token: Int)
        /// Read, and not empty: sent next if the batch in flight is settled and nothing moved.
        case ready(OutboxBatch)
    }

    /// After a 413: batches hold at most `maximumEvents` until the cursor reaches `until`.
    struct Split: Sendable, Equatable {
        var maximumEvents: Int
        var until: DeliveryCursor
    }
}
