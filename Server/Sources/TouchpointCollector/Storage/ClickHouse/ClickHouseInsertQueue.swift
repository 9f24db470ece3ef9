/// Gathers the inserts of requests that arrive together into one insert into ClickHouse, which
/// wants few large inserts rather than many small ones (each insert is a part on disk that merges
/// must fold; thousands a second are refused with "too many parts").
///
/// One insert is in flight at a time; the rows of the requests that arrive meanwhile wait and go
/// together in the next. Each request's call returns when the insert that carried its rows
/// succeeded, and throws its error when it failed: an insert is all or nothing, so every request
/// it carried fails and is retried, and none is acknowledged without its rows.
actor ClickHouseInsertQueue {
    private struct Waiting {
        let lines: [UInt8]
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// Sends one insert of `JSONEachRow` lines.
    private let send: @Sendable ([UInt8]) async throws -> Void
    private var waiting: [Waiting] = []
    private var isSending = false
    /// How many inserts were sent, for tests and metrics.
    private(set) var insertsSent = 0

    /// A queue whose inserts go through `send`.
    init(send: @escaping @Sendable ([UInt8]) async throws -> Void) {
        self.send = send
    }

    /// How many requests' rows wait for the next insert.
    var waitingCount: Int { waiting.count }

    /// Inserts `lines` (`JSONEachRow`, each line ending in a newline) with whatever else is
    /// waiting; returns when they are stored.
    func insert(_ lines: [UInt8]) async throws {
        guard !lines.isEmpty else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waiting.append(Waiting(lines: lines, continuation: continuation))
            if !isSending {
                isSending = true
                Task { await self.sendWaiting() }
            }
        }
    }

    private func sendWaiting() async {
        while !waiting.isEmpty {
            let carried = waiting
            waiting = []
            var body: [UInt8] = []
            body.reserveCapacity(carried.reduce(0) { $0 + $1.lines.count })
            for request in carried { body += request.lines }
            insertsSent += 1
            do {
                try await send(body)
                for request in carried { request.continuation.resume() }
            } catch {
                for request in carried { request.continuation.resume(throwing: error) }
            }
        }
        isSending = false
    }
}
