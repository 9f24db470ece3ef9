import TouchpointCore

/// Group commit for a single-writer database: requests that arrive while a write runs are stored
/// together by the next write, so the pages they share are written once, not once per request.
///
/// Each request still learns exactly which of its events were new: when two requests in one group
/// carry the same (source, messageId), the one that came first stores it.
final class InsertCoalescer: Sendable {
    /// One event to store, for `source`.
    struct Row: Sendable {
        var source: String
        var message: IngestMessage
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

    /// Stores rows (unique keys) and returns the keys of those that were new.
    typealias Write = @Sendable ([Row]) async throws -> Set<Key>

    private let state = Locked(State())
    private let maximumRows: Int
    private let write: Write

    /// - Parameters:
    ///   - maximumRows: the most rows one write takes (later requests wait for the next).
    ///   - write: stores rows with unique keys; returns the keys of those stored now.
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
            let requests = group.map(\.rows)
            do {
                let stored = try await write(Self.firstCopies(requests))
                for (pending, flags) in zip(group, Self.flags(requests, stored: stored)) {
                    pending.continuation.resume(returning: flags)
                }
            } catch {
                for pending in group { pending.continuation.resume(throwing: error) }
            }
        }
    }

    /// The rows to write for requests stored together: the first copy of each key, in order.
    static func firstCopies(_ requests: [[Row]]) -> [Row] {
        var claimed = Set<Key>()
        var unique: [Row] = []
        unique.reserveCapacity(requests.reduce(0) { $0 + $1.count })
        for rows in requests {
            for row in rows where claimed.insert(row.key).inserted { unique.append(row) }
        }
        return unique
    }

    /// Per request, one flag per row: true for the row that stored its key now (the first copy of a
    /// key among the requests), false for any other copy and for keys stored before.
    static func flags(_ requests: [[Row]], stored: Set<Key>) -> [[Bool]] {
        var reported = Set<Key>()
        return requests.map { rows in
            rows.map { row in
                let key = row.key
                return stored.contains(key) && reported.insert(key).inserted
            }
        }
    }
}

extension InsertCoalescer.Row {
    /// The row's deduplication key.
    var key: InsertCoalescer.Key { InsertCoalescer.Key(source: source, messageId: message.messageId) }
}
