import TouchpointCore

extension StoreValue {
    /// Every leaf under this value with its key path, in document order (object members by
    /// sorted key, array elements by index). Leaves are scalars, colors, URLs, nulls and empty
    /// arrays or objects.
    ///
    /// ```swift
    /// StoreValue.object(["cart": ["total": 3, "items": []]]).flattened()
    /// // [("cart.items", []), ("cart.total", 3)]
    /// ```
    public func flattened() -> [(keyPath: String, value: StoreValue)] {
        var leaves: [(keyPath: String, value: StoreValue)] = []
        collectLeaves(JSONPath.root, into: &leaves)
        return leaves
    }

    private func collectLeaves(_ path: JSONPath, into leaves: inout [(keyPath: String, value: StoreValue)]) {
        switch self {
        case .object(let members) where !members.isEmpty:
            for key in members.keys.sorted() { members[key]!.collectLeaves(path.appending(key), into: &leaves) }
        case .array(let elements) where !elements.isEmpty:
            for (index, element) in elements.enumerated() {
                element.collectLeaves(path.appending(index: index), into: &leaves)
            }
        default:
            leaves.append((path.description, self))
        }
    }
}
