import Dispatch
import TouchpointCore

/// A turnstile a test holds shut: code under test stops at it until the test lets it through,
/// and the test can see how many have arrived.
///
/// It makes an interleaving happen on purpose instead of hoping for it. A server handler that
/// waits at a gate keeps a request in flight for as long as the test needs; an adapter that waits
/// at one plays a slow tool:
///
/// ```swift
/// let gate = Gate()
/// let server = try TestHTTPServer { _ in
///     await gate.pass()  // the request stays in flight until the test opens the gate
///     return .json(["version": 1])
/// }
/// // … start the work that sends the request, then, while it is in flight:
/// #expect(await eventually { gate.arrivals == 1 })
/// gate.open()
/// ```
///
/// Each ``open(_:)`` lets that many callers through, waiting ones first, then later arrivals
/// (like a semaphore's signals).
public final class Gate: Sendable {
    private struct State {
        var arrivals = 0
        var permits = 0
        var nextWaiter = 0
        var waiters: [(id: Int, resume: @Sendable () -> Void)] = []
    }

    private let state = Locked(State())

    /// Creates a shut gate.
    public init() {}

    /// How many times a caller reached the gate (through it or still waiting).
    public var arrivals: Int { state.withLock { $0.arrivals } }

    /// How many callers are waiting at the gate now.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Waits at the gate, blocking the calling thread, until the test lets this caller through.
    /// For threads the code under test owns (an adapter's thread); a task uses ``pass()``.
    public func passBlocking() {
        let semaphore = DispatchSemaphore(value: 0)
        let id = newWaiterID()
        if arrive(id, resume: { semaphore.signal() }, isCancelled: { false }) { return }
        semaphore.wait()
    }

    /// Waits at the gate, suspending the calling task, until the test lets it through or the task
    /// is cancelled.
    public func pass() async {
        let id = newWaiterID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Cancellation is checked under the lock, so `onCancel` either finds this waiter or
                // runs before it and it never waits.
                if arrive(id, resume: { continuation.resume() }, isCancelled: { Task.isCancelled }) {
                    continuation.resume()
                }
            }
        } onCancel: {
            let resume = state.withLock { state -> (@Sendable () -> Void)? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).resume
            }
            resume?()
        }
    }

    /// Lets `count` callers through: those waiting, in the order they arrived, then as many later
    /// arrivals as remain.
    public func open(_ count: Int = 1) {
        precondition(count >= 0, "Gate.open: \(count) is not a count")
        let released = state.withLock { state -> [@Sendable () -> Void] in
            state.permits += count
            let taken = min(state.permits, state.waiters.count)
            state.permits -= taken
            defer { state.waiters.removeFirst(taken) }
            return state.waiters.prefix(taken).map(\.resume)
        }
        for resume in released { resume() }
    }

    private func newWaiterID() -> Int {
        state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
    }

    /// Counts an arrival and decides, under the lock, whether it goes on at once (a permit is
    /// left, or its task is already cancelled: true) or waits (`resume` queued: false).
    private func arrive(_ id: Int, resume: @escaping @Sendable () -> Void, isCancelled: () -> Bool) -> Bool {
        state.withLock { state in
            state.arrivals += 1
            if state.permits > 0 {
                state.permits -= 1
                return true
            }
            if isCancelled() { return true }
            state.waiters.append((id, resume))
            return false
        }
    }
}
