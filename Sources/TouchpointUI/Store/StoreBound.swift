#if canImport(SwiftUI)
import SwiftUI
import TouchpointStore

/// Shows content built from key paths of a store, subscribing when it appears and cancelling
/// when it disappears; only the bound paths' changes re-render it.
///
/// ```swift
/// StoreBound(checkout, keyPaths: ["cart.total"]) { values in
///     Text("Total: \(values["cart.total"]?.doubleValue ?? 0, format: .currency(code: "EUR"))")
/// }
/// ```
///
/// The subscription logic is ``StoreBinding`` (tested on every platform); this view only forwards
/// `onAppear`/`onDisappear` to it and moves the values to the main actor.
public struct StoreBound<Content: View>: View {
    @State private var model: StoreBoundModel
    private let content: ([String: StoreValue]) -> Content

    /// Creates the view.
    /// - Parameters:
    ///   - store: the store to observe.
    ///   - keyPaths: the key paths (or patterns) the content shows.
    ///   - content: builds the view from the bound values (`.null` for absent ones).
    public init(
        _ store: any KeyValueStore, keyPaths: Set<String>,
        @ViewBuilder content: @escaping ([String: StoreValue]) -> Content
    ) {
        _model = State(initialValue: StoreBoundModel(store: store, keyPaths: keyPaths))
        self.content = content
    }

    public var body: some View {
        content(model.values)
            .onAppear { model.appear() }
            .onDisappear { model.disappear() }
    }
}

/// Holds a ``StoreBinding`` and republishes its values on the main actor.
@MainActor
@Observable
final class StoreBoundModel {
    private(set) var values: [String: StoreValue] = [:]
    @ObservationIgnored private var binding: StoreBinding?
    @ObservationIgnored private let store: any KeyValueStore
    @ObservationIgnored private let keyPaths: Set<String>

    init(store: any KeyValueStore, keyPaths: Set<String>) {
        self.store = store
        self.keyPaths = keyPaths
    }

    func appear() {
        if binding == nil {
            binding = StoreBinding(store: store, keyPaths: keyPaths) { [weak self] values in
                Task { @MainActor in self?.values = values }
            }
        }
        binding?.appear()
    }

    func disappear() { binding?.disappear() }
}
#endif
