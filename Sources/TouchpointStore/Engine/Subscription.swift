import TouchpointCore

/// One observer of one or more key paths, as the store's index holds it.
struct Subscription {
    let id: Int
    let paths: [JSONPath]
    /// The key paths as the subscriber wrote them; the keys of a multi-path value.
    let keyPaths: [String]
    /// Whether the subscriber gets one object of all its paths' values (``KeyValueStore/publisher(for:)-(Set<String>)``).
    let combined: Bool
    let kind: String
    let deliver: @Sendable (StoreValue?) -> Void

    /// What this subscriber sees in `root`.
    func value(in root: StoreValue) -> StoreValue? {
        guard combined else { return root.resolve(paths[0]) }
        var members: [String: StoreValue] = [:]
        for (keyPath, path) in zip(keyPaths, paths) { members[keyPath] = root.resolve(path) ?? .null }
        return .object(members)
    }
}

/// A value or change waiting to be handed to an observer, outside the store's lock.
struct Delivery {
    let depth: Int
    let run: @Sendable () -> Void
}
