import Dispatch
import TouchpointCore

/// Wakes the dispatcher's loop: a level-triggered flag with a timed wait.
///
/// A signal with nobody waiting is kept, so the next wait returns at once: a signal sent between
/// the loop's decision to wait and its wait is never lost.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>)?
        var lastID = 0
    }

    private let state = Locked(State())

    /// Wakes the waiter, or the next one.
    func signal() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        continuation?.resume()
    }

    /// Returns after a signal, after `seconds` (nil: no limit), or when the task is cancelled.
    func wait(seconds: Double?) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let id: Int? = state.withLock { state in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return nil
                    }
                    state.lastID += 1
                    state.waiter = (state.lastID, continuation)
                    return state.lastID
                }
                guard let id else {
                    continuation.resume()
                    return
                }
                if let seconds {
                    DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { [weak self] in
                        self?.expire(id)
                    }
                }
            }
        } onCancel: {
            signal()
        }
    }

    private func expire(_ id: Int) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter, waiter.id == id else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        continuation?.resume()
    }
}
