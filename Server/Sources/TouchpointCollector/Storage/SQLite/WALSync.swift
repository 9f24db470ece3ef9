import Logging
import NIOPosix
import TouchpointCore

/// Makes the writer's commits durable on a thread of its own, so the writer goes on to the next
/// transaction while the last one's write-ahead log is flushed to disk.
///
/// The writer's connection runs with `synchronous = NORMAL`: its `COMMIT` hands the WAL frames to
/// the operating system and returns without `fsync` (checkpoints still sync the WAL before copying
/// it and the database before the WAL starts over, so the file stays consistent whatever happens).
/// Each commit then takes a ticket (``commit()``), and whoever must not answer before the commit
/// is on disk — every `200` of ingest, every acknowledged write — waits for its ticket
/// (``durable(_:)`` or ``whenDurable(_:_:)``). This thread flushes the WAL file (`fdatasync` on
/// Linux) for every commit made before the flush began, then releases those tickets: one flush
/// serves every commit made while the one before ran. Measured with `touchpoint loadgen` (BENCHMARKS.md), the writer
/// had spent a third of its time waiting in `fsync` at each `COMMIT`.
///
/// A flush that fails is final: Linux may drop the pages it could not write and report the next
/// `fsync` as a success, so no later commit can be called durable either. Every waiting and later
/// ticket fails with ``StorageError/Code-swift.struct/database``, and writes are refused
/// (``check()``) until the collector is restarted; SQLite then recovers the database from what the
/// disk holds, and clients retry what was not acknowledged.
final class WALSync: Sendable {
    /// Flushes the write-ahead log to disk, or throws why it could not.
    typealias Flush = @Sendable () throws -> Void
    /// Told nil once a ticket is durable, or the error that keeps it from being so.
    typealias Completion = @Sendable ((any Error)?) -> Void

    private struct State {
        /// The ticket of the newest commit.
        var committed: UInt64 = 0
        /// Every ticket up to this one is on disk.
        var durable: UInt64 = 0
        /// Whether the flushing thread is at work (it stops when nobody waits).
        var flushing = false
        /// The failure that ended durability, for good.
        var failure: StorageError?
        var waiting: [(ticket: UInt64, completion: Completion)] = []
        var flushes = 0
    }

    private let state = Locked(State())
    private let thread: NIOThreadPool
    private let flush: Flush
    private let logger: Logger?

    /// Starts the flushing thread (the flushes block); ``close()`` stops it.
    /// - Parameters:
    ///   - flush: flushes the log; ``fsyncing(_:)`` of the `-wal` file for a database.
    ///   - logger: where a failed flush is reported (once, as critical).
    init(flush: @escaping Flush, logger: Logger? = nil) {
        thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        self.flush = flush
        self.logger = logger
    }

    /// Stops the flushing thread once its flush is done; a ticket waited on from now on fails.
    func close() async {
        try? await thread.shutdownGracefully()
    }

    /// A flush that `fsync`s the file at `path` (the database's `-wal` file, as SQLite names it),
    /// opened anew each time so that it is always the file SQLite writes. An absent file is a
    /// failure: while the collector has the database open SQLite keeps its WAL, so the commits are
    /// somewhere this flush cannot reach.
    static func fsyncing(_ path: String) -> Flush {
        { try AtomicFile.syncData(path) }
    }

    /// Called on the writer's thread right after a commit returned: the commit's ticket.
    func commit() -> UInt64 {
        state.withLock { state in
            state.committed += 1
            return state.committed
        }
    }

    /// The ticket of the newest commit (0 before the first).
    var lastCommit: UInt64 { state.withLock { $0.committed } }

    /// A commit's ticket, with the ``WALSync`` that makes it durable.
    struct Ticket: Sendable {
        let sync: WALSync
        let number: UInt64

        /// Returns once the commit is on disk; see ``WALSync/durable(_:)``.
        func durable() async throws { try await sync.durable(number) }

        /// See ``WALSync/whenDurable(_:_:)``.
        func whenDurable(_ completion: @escaping Completion) { sync.whenDurable(number, completion) }
    }

    /// Throws the failure that ended durability, if one did: a write about to start is refused.
    func check() throws {
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    /// Returns once every commit up to `ticket` is on disk.
    /// - Throws: ``StorageError`` when the log could not be flushed (now or before).
    func durable(_ ticket: UInt64) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            whenDurable(ticket) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    /// Calls `completion` once every commit up to `ticket` is on disk (with nil), or with the error
    /// that keeps it from being so; at once when that is already known, otherwise on the flushing
    /// thread.
    func whenDurable(_ ticket: UInt64, _ completion: @escaping Completion) {
        enum Next {
            case done((any Error)?)
            case queued
            case start
        }
        let next = state.withLock { state -> Next in
            if let failure = state.failure { return .done(failure) }
            if ticket <= state.durable { return .done(nil) }
            state.waiting.append((ticket, completion))
            guard !state.flushing else { return .queued }
            state.flushing = true
            return .start
        }
        switch next {
        case .done(let error): completion(error)
        case .queued: break
        case .start:
            thread.submit { [self] work in
                guard case .active = work else {
                    return fail(StorageError(code: .unavailable, message: "the SQLite database is closed"))
                }
                flushWhileWaited()
            }
        }
    }

    /// Flushes of the log so far (for tests).
    var flushes: Int { state.withLock { $0.flushes } }

    /// Every commit up to this ticket is on disk (for tests).
    var durableThrough: UInt64 { state.withLock { $0.durable } }

    /// On the flushing thread: flushes while anybody waits for a commit not yet on disk.
    private func flushWhileWaited() {
        while true {
            let target = state.withLock { state -> UInt64? in
                guard state.failure == nil, !state.waiting.isEmpty else {
                    state.flushing = false
                    return nil
                }
                return state.committed
            }
            guard let target else { return }
            // Every commit up to `target` had returned before this flush began, so its frames are
            // in the file the flush writes out.
            do {
                try flush()
            } catch {
                let failure = StorageError(
                    code: .database,
                    message:
                        "the SQLite write-ahead log could not be flushed to disk (\(error)); writes are refused until the collector restarts"
                )
                logger?.critical("\(failure.message)")
                return fail(failure)
            }
            let ready = state.withLock { state -> [Completion] in
                state.flushes += 1
                state.durable = max(state.durable, target)
                let ready = state.waiting.filter { $0.ticket <= target }.map(\.completion)
                state.waiting.removeAll { $0.ticket <= target }
                return ready
            }
            for completion in ready { completion(nil) }
        }
    }

    /// Ends durability for good with `failure`, failing everything waiting.
    private func fail(_ failure: StorageError) {
        let waiting = state.withLock { state -> [Completion] in
            state.failure = state.failure ?? failure
            state.flushing = false
            defer { state.waiting = [] }
            return state.waiting.map(\.completion)
        }
        for completion in waiting { completion(failure) }
    }
}
