import TouchpointCore

/// A ``StoreState`` behind its lock, with the re-entrancy rules every store call goes through.
///
/// The lock is held only while the state machine runs, never while subscribers are called; the
/// one piece of user code that runs under it is a live expression's `compute`. Reads from that
/// code see the in-progress values; writes from it are refused (they would deadlock).
///
/// The lock must stay exclusive: reads mutate the state too (they write deferred expression
/// outputs into the tree first, see `StoreState.materialize`), so a reader/writer lock would
/// race.
final class GuardedState: Sendable {
    let reentrancy: ReentrancyContext
    private let state: Locked<StoreState>

    /// Guards the state `make` builds around this guard's re-entrancy context.
    init(_ make: (ReentrancyContext) -> StoreState) {
        let reentrancy = ReentrancyContext()
        self.reentrancy = reentrancy
        self.state = Locked(make(reentrancy))
    }

    /// The value at a key path (or pattern).
    func value(at keyPath: String) throws(StoreError) -> StoreValue? {
        if reentrancy.isHeldByCurrentThread { return reentrancy.reader?(keyPath) ?? nil }
        return try state.withLock { state in
            Result { () throws(StoreError) in state.value(at: try state.paths.entry(keyPath)) }
        }.get()
    }

    func snapshot() -> [String: StoreValue] {
        if reentrancy.isHeldByCurrentThread { return reentrancy.reader?("$")?.objectValue ?? [:] }
        return state.withLock { $0.snapshot() }
    }

    /// Runs `body` on the state, marking this thread as the holder; nil when this thread already
    /// holds it (a call from inside a live expression).
    func mutate<Result>(_ body: (inout StoreState) -> Result) -> Result? {
        guard !reentrancy.isHeldByCurrentThread else { return nil }
        return state.withLock { state in
            reentrancy.markHeld(true)
            defer { reentrancy.markHeld(false) }
            return body(&state)
        }
    }

    /// Reads through the lock without marking a holder (no user code runs in `body`).
    func read<Result>(_ body: (inout StoreState) -> Result) -> Result? {
        guard !reentrancy.isHeldByCurrentThread else { return nil }
        return state.withLock(body)
    }
}
