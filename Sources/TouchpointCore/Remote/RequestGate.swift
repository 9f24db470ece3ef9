/// Whether the ``RemoteResource``s that share it may send requests now: closed while the user
/// opted out of recording, so that nothing (not even a config fetch, which tells a server the app
/// is running) leaves the device. `TouchpointSDK` closes the one it gives the survey config and
/// the promo catalog on `optOut()` and opens it on `optIn()`.
///
/// While the gate is closed, ``RemoteResource/refresh()`` and ``RemoteResource/forceRefresh()``
/// serve what is held (the last value or the disk cache) without a request, and an auto-refresh
/// schedule waits at the gate; it checks at once when the gate opens, if a check is due. A
/// request already in flight completes.
///
/// ```swift
/// let gate = RequestGate(isOpen: !recorder.isOptedOut)
/// let resource = RemoteResource(
///     url: url, cacheDirectory: cache,
///     configuration: RemoteResourceConfiguration(gate: gate),
///     decodeJSON: { try Config(json: $0) })
/// gate.close()  // the user opted out
/// ```
public final class RequestGate: Sendable, Hashable, CustomStringConvertible {
    private struct State {
        var isOpen: Bool
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state: Locked<State>

    /// Creates a gate, open (requests allowed) or closed.
    public init(isOpen: Bool = true) {
        state = Locked(State(isOpen: isOpen))
    }

    /// Whether requests may be sent now.
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// How many auto-refresh schedules wait for the gate to open.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Allows requests again; waiting schedules resume.
    public func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Stops requests until ``open()``.
    public func close() {
        state.withLock { $0.isOpen = false }
    }

    /// Sets the gate: open when `isOpen`, closed otherwise.
    public func set(open isOpen: Bool) {
        if isOpen { open() } else { close() }
    }

    /// Returns once the gate is open, or the task is cancelled.
    func waitUntilOpen() async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Cancellation is checked under the lock, so `onCancel` either finds this waiter or
                // ran before it was added and it never waits.
                let waits = state.withLock { state in
                    guard !state.isOpen, !Task.isCancelled else { return false }
                    state.waiters[id] = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    public var description: String { isOpen ? "RequestGate(open)" : "RequestGate(closed)" }

    /// Gates are equal when they are the same gate.
    public static func == (lhs: RequestGate, rhs: RequestGate) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
