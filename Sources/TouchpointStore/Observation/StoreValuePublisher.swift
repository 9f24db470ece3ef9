import TouchpointCore

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// The publisher behind ``ScopedStore/publisher(for:)-(String)``: each subscriber becomes one
/// subscription of the store, registered when it subscribes and removed when it cancels.
///
/// Values go straight from the store's delivery to the subscriber, without a subject in between.
/// A subscriber that has no demand left keeps only the newest value, delivered when it asks for
/// more: a state observer wants the latest state, not a backlog.
struct StoreValuePublisher<Output: Sendable>: Publisher {
    typealias Failure = Never

    let store: ScopedStore
    let keyPaths: [String]
    let combined: Bool
    let kind: String
    let convert: @Sendable (StoreValue?) -> Output

    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
        let subscription = StoreSubscription(subscriber, convert: convert)
        let id = store.subscribe(keyPaths, combined: combined, kind: kind) { current in
            subscription.offer(current)
            return { [weak subscription] value in subscription?.offer(value) }
        }
        if let id { subscription.attach(store: store, id: id) }
        subscriber.receive(subscription: subscription)
        if id == nil {
            // No key path parses: like `Just(nil)`, one value and done.
            subscription.offer(nil)
            subscription.finish()
        }
    }
}

/// One subscriber's subscription to a store: demand bookkeeping and one-at-a-time delivery.
///
/// It is not generic: it holds the subscriber as two closures and values as ``StoreValue``, so
/// the delivery path is compiled once instead of resolving generic metadata for every
/// subscriber type on every value.
final class StoreSubscription: Subscription, @unchecked Sendable {
    // Safe: every field of `state` is read and written under its lock, and the subscriber's
    // closures are only called by the thread that set `delivering` (never by two at once).
    private let state: Locked<State>

    private struct State {
        var receive: ((StoreValue?) -> Subscribers.Demand)?
        var complete: (() -> Void)?
        var demand = Subscribers.Demand.none
        /// The newest value not yet delivered (kept when there is no demand or a delivery is running).
        var pending: StoreValue?
        var hasPending = false
        var delivering = false
        var finishAfterDelivery = false
        weak var store: ScopedStore?
        var id: Int?
    }

    init<S: Subscriber>(_ subscriber: S, convert: @escaping @Sendable (StoreValue?) -> S.Input)
    where S.Failure == Never {
        state = Locked(
            State(
                receive: Self.receiver(subscriber, convert),
                complete: { subscriber.receive(completion: .finished) }))
    }

    /// What hands a value to `subscriber`. For the most common subscriber, `sink` on
    /// ``ScopedStore/publisher(for:)-(String)``, a closure over the concrete types, so a value
    /// does not go through the generic code and witness tables on its way.
    private static func receiver<S: Subscriber>(
        _ subscriber: S, _ convert: @escaping @Sendable (StoreValue?) -> S.Input
    ) -> (StoreValue?) -> Subscribers.Demand where S.Failure == Never {
        if let sink = subscriber as? Subscribers.Sink<StoreValue?, Never>,
            let convert = convert as? @Sendable (StoreValue?) -> StoreValue?
        {
            return { sink.receive(convert($0)) }
        }
        return { subscriber.receive(convert($0)) }
    }

    func attach(store: ScopedStore, id: Int) {
        state.withLock { state in
            state.store = store
            state.id = id
        }
    }

    /// A new value from the store (or the current one, on subscription).
    ///
    /// The common case (demand left, nothing pending, no delivery running) hands the value over
    /// at once, taking the lock once before and once after; otherwise it is kept as the pending
    /// value, for whoever delivers next.
    func offer(_ value: StoreValue?) {
        // The closure travels in an enum: returned bare through the lock's generic result, it
        // would be re-wrapped in a heap-allocated thunk on every value.
        let step = state.withLock { state -> Step? in
            if !state.delivering, !state.hasPending, state.demand > 0, let receive = state.receive {
                state.demand -= 1
                state.delivering = true
                return .value(receive, nil)
            }
            state.pending = value
            state.hasPending = true
            return nil
        }
        guard case .value(let receive, _)? = step else {
            deliverPending()
            return
        }
        let more = receive(value)
        let again = state.withLock { state -> Bool in
            state.delivering = false
            state.demand += more
            return state.hasPending || state.finishAfterDelivery
        }
        if again { deliverPending() }
    }

    func request(_ demand: Subscribers.Demand) {
        state.withLock { $0.demand += demand }
        deliverPending()
    }

    func cancel() {
        let detached = state.withLock { state -> (ScopedStore?, Int?) in
            state.receive = nil
            state.complete = nil
            state.pending = nil
            state.hasPending = false
            defer {
                state.store = nil
                state.id = nil
            }
            return (state.store, state.id)
        }
        if let store = detached.0, let id = detached.1 { store.unsubscribe(id) }
    }

    /// Delivers the pending value, then completes (for a publisher whose key paths did not parse).
    func finish() {
        state.withLock { $0.finishAfterDelivery = true }
        deliverPending()
    }

    private enum Step {
        case value((StoreValue?) -> Subscribers.Demand, StoreValue?)
        case complete(() -> Void)
    }

    /// Hands pending values to the subscriber while it has demand, one delivery at a time.
    private func deliverPending() {
        while true {
            let step = state.withLock { state -> Step? in
                guard !state.delivering, let receive = state.receive else { return nil }
                if state.hasPending, state.demand > 0 {
                    let value = state.pending
                    state.pending = nil
                    state.hasPending = false
                    state.demand -= 1
                    state.delivering = true
                    return .value(receive, value)
                }
                if state.finishAfterDelivery && !state.hasPending, let complete = state.complete {
                    state.receive = nil
                    state.complete = nil
                    return .complete(complete)
                }
                return nil
            }
            switch step {
            case nil:
                return
            case .complete(let complete)?:
                complete()
                return
            case .value(let receive, let value)?:
                let more = receive(value)
                state.withLock { state in
                    state.delivering = false
                    state.demand += more
                }
            }
        }
    }
}
