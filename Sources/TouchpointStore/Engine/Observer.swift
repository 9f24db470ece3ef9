import TouchpointCore

/// One subscription of one or more key paths, as the store's index holds it (a class, so the
/// index hands it around for one retain).
final class Observer {
    let id: Int
    let paths: [JSONPath]
    /// The key paths as the subscriber wrote them; the keys of a multi-path value.
    let keyPaths: [String]
    /// Whether the subscriber gets one object of all its paths' values (``KeyValueStore/publisher(for:)-(Set<String>)``).
    let combined: Bool
    let kind: String
    let deliver: @Sendable (StoreValue?) -> Void

    init(
        id: Int, paths: [JSONPath], keyPaths: [String], combined: Bool, kind: String,
        deliver: @escaping @Sendable (StoreValue?) -> Void
    ) {
        self.id = id
        self.paths = paths
        self.keyPaths = keyPaths
        self.combined = combined
        self.kind = kind
        self.deliver = deliver
    }

    /// What this subscriber sees in `root`.
    func value(in root: StoreValue) -> StoreValue? {
        Self.value(of: paths, keyPaths: keyPaths, combined: combined, in: root)
    }

    /// What a subscriber of `paths` sees in `root`: the value at its one path, or an object of
    /// the values at all of them (keyed by `keyPaths`, `.null` for absent ones).
    static func value(of paths: [JSONPath], keyPaths: [String], combined: Bool, in root: StoreValue) -> StoreValue? {
        guard combined else { return root.resolve(paths[0]) }
        var members: [String: StoreValue] = [:]
        for (keyPath, path) in zip(keyPaths, paths) { members[keyPath] = root.resolve(path) ?? .null }
        return .object(members)
    }
}

/// A value or change waiting to be handed to an observer, outside the store's lock.
struct Delivery {
    enum Target {
        case value(@Sendable (StoreValue?) -> Void, StoreValue?)
        case change(@Sendable (StoreChange) -> Void, StoreChange)
    }

    /// How deep in a subscriber-triggered cascade the change that produced it was.
    let depth: Int
    /// Deliveries of one change go out in this order (the subscription's id).
    let order: Int
    let target: Target

    func run() {
        switch target {
        case .value(let deliver, let value): deliver(value)
        case .change(let observe, let change): observe(change)
        }
    }
}
