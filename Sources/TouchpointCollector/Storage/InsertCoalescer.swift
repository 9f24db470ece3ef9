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

    private struct Key: Hashable {
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

    /// Stores rows (unique keys) and returns the (source, messageId) pairs that were new.
    typealias Write = @Sendable ([Row]) async throws -> Set<[String]>

    private let state = Locked(State())
    private let maximumRows: Int
    private let write: Write

    /// - Parameters:
    ///   - maximumRows: the most rows one write takes (later requests wait for the next).
    ///   - write: stores rows with unique keys; returns `[source, messageId]` of those stored now.
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
            // The first copy of a key in the group is the one written.
            var claimed = Set<Key>()
            var unique: [Row] = []
            for pending in group {
                for row in pending.rows
                where claimed.insert(Key(source: row.source, messageId: row.message.messageId)).inserted {
                    unique.append(row)
                }
            }
            do {
                let stored = try await write(unique)
                var reported = Set<Key>()
                for pending in group {
                    let flags = pending.rows.map { row -> Bool in
                        let key = Key(source: row.source, messageId: row.message.messageId)
                        return stored.contains([key.source, key.messageId]) && reported.insert(key).inserted
                    }
                    pending.continuation.resume(returning: flags)
                }
            } catch {
                for pending in group { pending.continuation.resume(throwing: error) }
            }
        }
    }
}
