import TouchpointCore

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// A component's binding to key paths of a store: subscribed while the component is on screen,
/// cancelled when it leaves.
///
/// Call ``appear()`` when the component appears and ``disappear()`` when it disappears (the
/// SwiftUI `StoreBound` view in `TouchpointUI` does both); while it is active, `onChange` gets
/// the bound values whenever one of them changes, and never after ``disappear()`` returns.
///
/// ```swift
/// let binding = StoreBinding(store: checkout, keyPaths: ["cart.total", "user.name"]) { values in
///     totalLabel.text = values["cart.total"]?.doubleValue.map { "\($0)" }
/// }
/// binding.appear()
/// ```
public final class StoreBinding: Sendable {
    /// The bound key paths.
    public let keyPaths: Set<String>
    private let store: any KeyValueStore
    private let onChange: @Sendable ([String: StoreValue]) -> Void
    private let state = Locked(State())

    private struct State {
        var cancellable: AnyCancellable?
        /// Bumped by each appear and disappear; a value from an older subscription is ignored.
        var generation = 0
        var active = false
        var values: [String: StoreValue] = [:]
    }

    /// Creates an inactive binding.
    /// - Parameters:
    ///   - store: the store to observe.
    ///   - keyPaths: the key paths (or patterns) the component shows.
    ///   - onChange: called with every bound value (`.null` for absent ones) on appear and on each
    ///     change, on the thread that made the change; hop to the main thread to update UI.
    public init(
        store: any KeyValueStore, keyPaths: Set<String>, onChange: @escaping @Sendable ([String: StoreValue]) -> Void
    ) {
        self.store = store
        self.keyPaths = keyPaths
        self.onChange = onChange
    }

    deinit { state.withLock { $0.cancellable?.cancel() } }

    /// Whether the binding is subscribed.
    public var isActive: Bool { state.withLock { $0.active } }

    /// The bound values as last delivered (`.null` for absent ones; empty before the first appear).
    public var values: [String: StoreValue] { state.withLock { $0.values } }

    /// Subscribes (once; a second appear without a disappear does nothing) and delivers the
    /// current values at once.
    public func appear() {
        let generation: Int? = state.withLock { state in
            guard !state.active else { return nil }
            state.active = true
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        // The publisher delivers the current value synchronously inside `sink`, so subscribe
        // outside the lock.
        let cancellable = store.publisher(for: keyPaths).sink { [weak self] value in
            self?.receive(value, generation: generation)
        }
        let stale = state.withLock { state -> AnyCancellable? in
            guard state.generation == generation else { return cancellable }
            state.cancellable = cancellable
            return nil
        }
        stale?.cancel()
    }

    /// Cancels the subscription; no value is delivered after this returns (unless another
    /// thread is in the middle of delivering one).
    public func disappear() {
        let cancellable = state.withLock { state -> AnyCancellable? in
            state.active = false
            state.generation += 1
            defer { state.cancellable = nil }
            return state.cancellable
        }
        cancellable?.cancel()
    }

    private func receive(_ value: StoreValue, generation: Int) {
        let values = state.withLock { state -> [String: StoreValue]? in
            guard state.active, state.generation == generation else { return nil }
            state.values = value.objectValue ?? [:]
            return state.values
        }
        if let values { onChange(values) }
    }
}
