import Foundation
import TouchpointCore

/// ``StoreState``: subscriptions and the deliveries they wait for.
extension StoreState {
    /// Adds a subscriber: `makeDeliver` gets the current value and returns what to call with
    /// later ones; both happen under the lock, so no change can slip between them.
    mutating func subscribe(
        _ entries: [KeyPathCache.Entry], keyPaths: [String], combined: Bool, kind: String,
        makeDeliver: (StoreValue?) -> @Sendable (StoreValue?) -> Void
    ) -> Int {
        // Outputs not yet in the tree are never observed: the subscriber's values come from it.
        materialize()
        nextID += 1
        let paths = entries.map(\.path)
        let current = Observer.value(of: paths, keyPaths: keyPaths, combined: combined, in: root)
        let deliver = makeDeliver(current)
        let subscription = Observer(
            id: nextID, paths: paths, keyPaths: keyPaths, combined: combined, kind: kind, deliver: deliver)
        subscriptions[nextID] = subscription
        for path in paths { subscriptionIndex.insert(path, subscription) }
        return nextID
    }

    mutating func unsubscribe(_ id: Int) {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        for path in subscription.paths { subscriptionIndex.remove(path) { $0 === subscription } }
    }

    mutating func observeChanges(_ observer: @escaping @Sendable (StoreChange) -> Void) -> Int {
        nextID += 1
        changeObservers[nextID] = observer
        return nextID
    }

    mutating func stopObservingChanges(_ id: Int) {
        changeObservers.removeValue(forKey: id)
    }

    /// Takes the deliveries queued so far; when there are none, the drain ends.
    mutating func takeDeliveries() -> [Delivery] {
        guard !pending.isEmpty else {
            delivering = false
            return []
        }
        var batch: [Delivery] = []
        swap(&batch, &pending)
        return batch
    }
}
