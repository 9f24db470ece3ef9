import TouchpointCore

/// Parsed key paths by their text, so a hot `set("cart.total", …)` parses once.
struct KeyPathCache {
    struct Entry {
        let path: JSONPath
        /// The path as ``JSONPath/description`` writes it, used in patches.
        let canonical: String
    }

    /// Past this many distinct texts the cache starts over, bounding its memory.
    static let limit = 4_096

    private var entries: [String: Entry] = [:]

    mutating func entry(_ text: String) throws(StoreError) -> Entry {
        if let entry = entries[text] { return entry }
        let path: JSONPath
        do {
            path = try JSONPath(parsing: text)
        } catch {
            throw StoreError(.invalidKeyPath, keyPath: text, error.description)
        }
        let entry = Entry(path: path, canonical: path.description)
        if entries.count >= Self.limit { entries.removeAll(keepingCapacity: true) }
        entries[text] = entry
        return entry
    }
}
