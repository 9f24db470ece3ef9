import TouchpointCore

/// Group commit for a single-writer database: requests that arrive while a write runs are stored
/// together by the next write, so the pages they share are written once, not once per request.
///
/// Each request still learns exactly which of its events were new: when two requests in one group
/// carry the same (source, messageId), the one that came first stores it.
final class InsertCoalescer: Sendable {
    /// One event to store, for `source`.
    ///
    /// A class: a write passes each row through several arrays (the request's, the group's first
    /// copies, the rollups), and a reference is one retain where the message's strings were one each.
    final class Row: Sendable {
        let source: String
        let message: IngestMessage
        /// The payload as stored: without the members the columns hold (``StoredPayload``); for
        /// SQLite also with the context's shareable members set apart, and
        /// ``StoredPayload/Lifted/derivedTime`` when `original_timestamp` need not be kept.
        let stored: StoredPayload.Compacted
        /// The hash of `stored.sharedContext`, worked out here rather than on the writer's thread.
        let sharedContextHash: Int
        /// The message's key in ``MessageKeyIndex`` (nil: not for SQLite), hashed here, once for
        /// the reader that reads ahead and the writer's lookup.
        let messageKey: Int64?
        /// The message id packed as SQLite keeps it (nil: not a UUID, kept as text, or not for
        /// SQLite), worked out here.
        let packedMessageId: PackedID.Bytes?
        /// The message's session, its key hashed here (nil: it has no session id, or the row is not
        /// for SQLite: PostgreSQL's statement adds to sessions itself).
        let session: SessionRollup.Key?
        /// The session id packed as SQLite keeps it (nil: none, not a UUID, or not for SQLite),
        /// worked out here.
        let packedSessionId: PackedID.Bytes?
        /// The message's person and whether that is its user id (``PersonKeys/person(of:)``),
        /// hashed here.
        let person: (person: PersonKeys.Person, isUser: Bool)?

        /// Compacts the message's payload here, on the request's task (not the writer's thread), and
        /// works out what the writer looks the row up by.
        /// - Parameter key: for a row that goes to SQLite, the store's key function
        ///   (``MessageKeyIndex/key``); nil for PostgreSQL. SQLite keeps shared contexts
        ///   (``SharedContexts``), leaves out an original timestamp it can work out, and keeps a
        ///   payload that is only `properties` as that object.
        init(source: String, message: IngestMessage, keyedBy key: MessageKeyIndex.KeyFunction?) {
            self.source = source
            self.message = message
            let forSQLite = key != nil
            messageKey = key?(source, message.messageId)
            var stored = StoredPayload.compact(
                message.payload, columns: StoredPayload.Columns(message), shareContext: forSQLite,
                unwrapProperties: forSQLite)
            if forSQLite, StoredPayload.derivesOriginalTimestamp(message) { stored.lifted.insert(.derivedTime) }
            self.stored = stored
            sharedContextHash = stored.sharedContext?.hashValue ?? 0
            packedMessageId = forSQLite ? PackedID.Bytes(message.messageId) : nil
            session = forSQLite ? message.sessionId.map { SessionRollup.Key(source: source, id: $0) } : nil
            packedSessionId = forSQLite ? message.sessionId.flatMap(PackedID.Bytes.init) : nil
            person = PersonKeys.person(source: source, message: message)
        }
    }

    /// What deduplication keys on: (source, messageId).
    struct Key: Hashable, Sendable {
        var source: String
        var messageId: String
    }

    private struct Pending {
        var rows: [Row]
        var continuation: CheckedContinuation<[Bool], any Error>
    }

    private struct State {
        var isWriting = false
        var queue: [Pending] = []
    }

    /// Stores rows (unique keys) and returns, per row, whether it was new, as soon as the write
    /// committed; and a function that calls its argument once the write is on disk (with nil) or
    /// cannot be (with the error). No request is answered before that: the next write runs
    /// meanwhile.
    typealias Write =
        @Sendable ([Row]) async throws -> (
            stored: [Bool], whenDurable: @Sendable (@escaping WALSync.Completion) -> Void
        )

    private let state = Locked(State())
    private let maximumRows: Int
    private let write: Write

    /// - Parameters:
    ///   - maximumRows: the most rows one write takes (later requests wait for the next).
    ///   - write: stores rows with unique keys; returns, per row, whether it was stored now.
    init(maximumRows: Int, write: @escaping Write) {
        self.maximumRows = maximumRows
        self.write = write
    }

    /// Stores `rows` with the next write.
    /// - Returns: one flag per row: stored now (true) or already stored (false).
    func insert(_ rows: [Row]) async throws -> [Bool] {
        try await withCheckedThrowingContinuation { continuation in
            let startWriting = state.withLock { state -> Bool in
                state.queue.append(Pending(rows: rows, continuation: continuation))
                guard !state.isWriting else { return false }
                state.isWriting = true
                return true
            }
            // Unstructured on purpose: a request that is cancelled must not abort the others' write.
            if startWriting { Task { await self.drain() } }
        }
    }

    private func drain() async {
        while true {
            let group = state.withLock { state -> [Pending] in
                var taken: [Pending] = []
                var rows = 0
                while let next = state.queue.first, taken.isEmpty || rows + next.rows.count <= maximumRows {
                    rows += next.rows.count
                    taken.append(state.queue.removeFirst())
                }
                if taken.isEmpty { state.isWriting = false }
                return taken
            }
            guard !group.isEmpty else { return }
            let unique = Self.firstCopies(group.map(\.rows))
            do {
                let (stored, whenDurable) = try await write(unique.rows)
                let flags = unique.flags(stored: stored)
                whenDurable { error in
                    for (pending, flags) in zip(group, flags) {
                        if let error {
                            pending.continuation.resume(throwing: error)
                        } else {
                            pending.continuation.resume(returning: flags)
                        }
                    }
                }
            } catch {
                for pending in group { pending.continuation.resume(throwing: error) }
            }
        }
    }

    /// The rows to write for requests stored together: the first copy of each key, in order.
    static func firstCopies(_ requests: [[Row]]) -> FirstCopies {
        var claimed = Set<Key>(minimumCapacity: requests.reduce(0) { $0 + $1.count })
        var unique = FirstCopies()
        unique.rows.reserveCapacity(claimed.capacity)
        unique.positions = requests.map { rows in
            rows.map { row in
                guard claimed.insert(row.key).inserted else { return nil }
                unique.rows.append(row)
                return unique.rows.count - 1
            }
        }
        return unique
    }

    /// The first copy of each key among requests stored together, and where each request's rows went.
    struct FirstCopies {
        /// The rows to write, each key once, in order.
        var rows: [Row] = []
        /// Per request, per row: its place in `rows`, or nil for a later copy of a key.
        var positions: [[Int?]] = []

        /// Per request, one flag per row: true for the row that stored its key now (the first copy
        /// of a key among the requests, when `stored` says its write stored it), false for any
        /// other copy and for keys stored before.
        /// - Parameter stored: per row of `rows`, whether the write stored it.
        func flags(stored: [Bool]) -> [[Bool]] {
            positions.map { request in request.map { position in position.map { stored[$0] } ?? false } }
        }
    }
}

extension InsertCoalescer.Row {
    /// The row's deduplication key.
    var key: InsertCoalescer.Key { InsertCoalescer.Key(source: source, messageId: message.messageId) }
}
