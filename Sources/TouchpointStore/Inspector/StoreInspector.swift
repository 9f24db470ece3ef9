#if DEBUG
/// A look inside one store, for debugging (debug builds only): its values by key path, who is
/// subscribed, what changed recently, and manual writes to see the UI react.
///
/// `TouchpointUI`'s `StoreInspectorView` renders it; `touchpoint store inspect FILE` prints a
/// file scope's values the same way.
public struct StoreInspector: Sendable {
    /// One leaf value and where it is.
    public struct Entry: Sendable, Hashable, Identifiable {
        /// The key path, canonically written.
        public let keyPath: String
        /// The value.
        public let value: StoreValue
        /// The key path.
        public var id: String { keyPath }
        /// The value as JSON text (tagged, as ``StoreValue/jsonString(sortedKeys:)`` writes it).
        public var valueText: String { value.jsonString(sortedKeys: true) }
    }

    /// One active subscription.
    public struct SubscriptionInfo: Sendable, Hashable, Identifiable {
        /// The store's id for it.
        public let id: Int
        /// How it was made: `publisher`, `publisher(set)`, `values`, `values(set)`.
        public let kind: String
        /// The key paths it observes.
        public let keyPaths: [String]
    }

    /// One registered live expression.
    public struct ExpressionInfo: Sendable, Hashable, Identifiable {
        /// The expression's id.
        public let id: String
        /// Where it writes.
        public let outputKeyPath: String
        /// What it depends on, sorted.
        public let dependsOn: [String]
    }

    /// The inspected store.
    public let store: ScopedStore

    /// Inspects a store.
    public init(_ store: ScopedStore) { self.store = store }

    /// Every leaf value by key path, in document order.
    public func entries() -> [Entry] {
        StoreValue.object(store.snapshot()).flattened().map { Entry(keyPath: $0.keyPath, value: $0.value) }
    }

    /// The active subscriptions, oldest first.
    public func subscriptions() -> [SubscriptionInfo] {
        let all = store.guarded.read { state in
            state.subscriptions.values.map { SubscriptionInfo(id: $0.id, kind: $0.kind, keyPaths: $0.keyPaths) }
        }
        return (all ?? []).sorted { $0.id < $1.id }
    }

    /// The registered live expressions, in dependency order.
    public func liveExpressions() -> [ExpressionInfo] {
        store.guarded.read { state in
            state.expressions.ordered.map {
                ExpressionInfo(
                    id: $0.expression.id, outputKeyPath: $0.expression.outputKeyPath,
                    dependsOn: $0.expression.dependsOn.sorted())
            }
        } ?? []
    }

    /// The most recent changes, oldest first (at most ``StoreConfiguration/recentChangeLimit``).
    public func recentChanges() -> [StoreChange] {
        store.guarded.read { $0.recentChanges.elements } ?? []
    }

    /// Writes a value given as JSON text (tagged forms such as `{"$color":"#FF0000"}` work).
    /// - Returns: the store's answer, or `.failed` naming the byte where the JSON is broken.
    @discardableResult
    public func write(_ keyPath: String, jsonText: String) -> ValidationResult {
        do {
            return store.set(keyPath, try StoreValue(jsonText: jsonText))
        } catch {
            return .failed(reason: "\(keyPath): \(error)")
        }
    }

    /// Removes a value.
    @discardableResult
    public func remove(_ keyPath: String) -> ValidationResult { store.remove(keyPath) }
}
#endif
