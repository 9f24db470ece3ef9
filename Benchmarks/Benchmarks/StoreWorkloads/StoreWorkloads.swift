import Touchpoint

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// A store where `n1 = n0 + 1`, `n2 = n1 + 1`, … up to `n<depth>` (live expressions).
public func chainStore(depth: Int) -> ScopedStore {
    let store = DefaultStore(appID: "bench").scoped(.appMemory)
    store.set("n0", 0)
    for level in stride(from: depth, through: 1, by: -1) {
        let input = "n\(level - 1)"
        store.registerLiveExpression(
            LiveExpression(id: "e\(level)", outputKeyPath: "n\(level)", dependsOn: [input]) { get in
                guard case .integer(let value)? = get(input) else { return nil }
                return .integer(value + 1)
            })
    }
    return store
}

/// A session store with `unrelated` subscribers on other key paths (`screens.s<i>.widgets[<j>].title`)
/// and `affected` subscribers on `cart.total`; `onValue` runs for every value they receive.
public final class SubscribedStore: Sendable {
    /// The store.
    public let store: ScopedStore
    private let cancellables: Locked<[AnyCancellable]>

    /// Creates the store and its subscribers.
    public init(unrelated: Int, affected: Int, onValue: @escaping @Sendable () -> Void = {}) {
        store = DefaultStore(appID: "bench").scoped(.scenarioSession(id: "bench"))
        var cancellables: [AnyCancellable] = []
        for index in 0..<unrelated {
            let path = "screens.s\(index % 100).widgets[\(index / 100)].title"
            cancellables.append(store.publisher(for: path).sink { _ in onValue() })
        }
        for _ in 0..<affected {
            cancellables.append(store.publisher(for: "cart.total").sink { _ in onValue() })
        }
        self.cancellables = Locked(cancellables)
    }
}
