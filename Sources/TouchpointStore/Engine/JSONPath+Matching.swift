import TouchpointCore

extension JSONPath {
    /// Whether any step is a wildcard (the path is a pattern, not one location).
    var hasWildcard: Bool { components.contains(.wildcard) }

    /// Whether a change at one path can change the value at the other: one is a prefix of the
    /// other, step by step, where a wildcard step matches any step.
    func intersects(_ other: JSONPath) -> Bool {
        Self.intersects(components[...], other.components[...])
    }

    static func intersects(_ a: ArraySlice<Component>, _ b: ArraySlice<Component>) -> Bool {
        var i = a.startIndex
        var j = b.startIndex
        while i < a.endIndex && j < b.endIndex {
            let x = a[i]
            let y = b[j]
            if x != y && x != .wildcard && y != .wildcard { return false }
            i += 1
            j += 1
        }
        return true
    }

    /// Whether `concrete` (no wildcards) is one of the locations this pattern names.
    func matches(_ concrete: JSONPath) -> Bool {
        components.count == concrete.components.count && intersects(concrete)
    }

    /// Whether this path is a proper prefix of, or equal to, `other`.
    func isPrefix(of other: JSONPath) -> Bool {
        components.count <= other.components.count && other.components.starts(with: components)
    }

    /// The path without its last step (the root stays the root).
    var parent: JSONPath { JSONPath(components: Array(components.dropLast())) }
}
