import TouchpointCore

/// Parsed key paths by their text, so a hot `set("cart.total", …)` parses once.
struct KeyPathCache {
    /// One parsed key path, with what the store worked out about it last time (the subscribers a
    /// write there can affect), so a repeated write to the same path finds them without walking
    /// the index.
    final class Entry {
        /// The key path as written.
        let text: String
        let path: JSONPath
        /// The path as ``JSONPath/description`` writes it, used in patches.
        let canonical: String

        // Safe without exclusivity checks: entries are used only by the thread that holds the
        // store's lock (a copy of the state shares them only under the same lock).
        @exclusivity(unchecked) private var subscriberNodesVersion: VersionToken?
        @exclusivity(unchecked) private var subscriberNodes: [PathTrie<Observer>.Node] = []
        @exclusivity(unchecked) private var outputsVersion: VersionToken?
        @exclusivity(unchecked) private var outputs: [Int] = []

        init(text: String, path: JSONPath, canonical: String) {
            self.text = text
            self.path = path
            self.canonical = canonical
        }

        /// The nodes of `index` that hold subscribers and whose path intersects this one.
        func subscriberNodes(in index: PathTrie<Observer>) -> [PathTrie<Observer>.Node] {
            if subscriberNodesVersion !== index.version {
                var nodes: [PathTrie<Observer>.Node] = []
                index.forEachNode(intersecting: path) { nodes.append($0) }
                subscriberNodes = nodes
                subscriberNodesVersion = index.version
            }
            return subscriberNodes
        }

        /// The positions in `graph` of the expressions whose output intersects this path.
        func outputs(in graph: ExpressionGraph) -> [Int] {
            if outputsVersion !== graph.version {
                var positions: [Int] = []
                graph.outputIndex.forEachIntersecting(path) { positions.append($0) }
                outputs = positions
                outputsVersion = graph.version
            }
            return outputs
        }
    }

    /// Past this many distinct texts the cache starts over, bounding its memory.
    static let limit = 4_096

    private var entries: [String: Entry] = [:]
    /// The entry used last, checked before hashing: a store is often written at one path many
    /// times in a row (a counter, a slider, a text field).
    private var last: Entry?

    mutating func entry(_ text: String) throws(StoreError) -> Entry {
        if let last, last.text == text { return last }
        if let entry = entries[text] {
            last = entry
            return entry
        }
        let path: JSONPath
        do {
            path = try JSONPath(parsing: text)
        } catch {
            throw StoreError(.invalidKeyPath, keyPath: text, error.description)
        }
        let entry = Entry(text: text, path: path, canonical: path.description)
        if entries.count >= Self.limit { entries.removeAll(keepingCapacity: true) }
        entries[text] = entry
        last = entry
        return entry
    }
}
