import TouchpointCore

/// Group commit for a single-writer database: requests that arrive while a write runs are stored
/// together by the next write, so the pages they share are written once, not once per request.
///
/// Each request still learns exactly which of its events were new: when two requests in one group
/// carry the same (source, messageId), the one that came first stores it.
final class InsertCoalescer: Sendable {
    private struct Pending {
        var rows: [SQLiteEventWriter.Row]
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
        @Sendable ([SQLiteEventWriter.Row]) async throws -> (
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
    func insert(_ rows: [SQLiteEventWriter.Row]) async throws -> [Bool] {
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
            let unique = FirstCopies(group.map(\.rows))
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
}
