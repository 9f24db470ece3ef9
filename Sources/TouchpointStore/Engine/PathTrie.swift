import TouchpointCore

/// An index of paths (patterns allowed) by their steps, answering "which entries can a change at
/// this path affect?" in time that grows with the matching entries, not with all of them.
///
/// An entry matches a changed path when its path is an ancestor of it, equal to it or under it,
/// step by step, where a wildcard step (on either side) matches any step.
final class PathTrie {
    final class Node {
        var children: [JSONPath.Component: Node] = [:]
        var entries: [Int] = []
        /// Entries in this node and below it.
        var count = 0
    }

    private let root = Node()

    /// How many entries the trie holds (an id inserted under two paths counts twice).
    var count: Int { root.count }

    func insert(_ path: JSONPath, id: Int) {
        var node = root
        node.count += 1
        for component in path.components {
            if let child = node.children[component] {
                node = child
            } else {
                let child = Node()
                node.children[component] = child
                node = child
            }
            node.count += 1
        }
        node.entries.append(id)
    }

    func remove(_ path: JSONPath, id: Int) {
        var trail: [Node] = [root]
        var node = root
        for component in path.components {
            guard let child = node.children[component] else { return }
            node = child
            trail.append(node)
        }
        guard let position = node.entries.firstIndex(of: id) else { return }
        node.entries.remove(at: position)
        for visited in trail { visited.count -= 1 }
        // Prune the branch that no longer holds anything.
        for depth in stride(from: path.components.count, to: 0, by: -1) where trail[depth].count == 0 {
            trail[depth - 1].children.removeValue(forKey: path.components[depth - 1])
        }
    }

    /// Calls `body` with every entry whose path intersects `path` (an id may come more than once).
    func forEachIntersecting(_ path: JSONPath, _ body: (Int) -> Void) {
        visit(root, path.components[...], body)
    }

    private func visit(_ node: Node, _ rest: ArraySlice<JSONPath.Component>, _ body: (Int) -> Void) {
        guard let step = rest.first else {
            Self.forEachBelow(node, body)
            return
        }
        for id in node.entries { body(id) }
        let remaining = rest.dropFirst()
        if step == .wildcard {
            for child in node.children.values { visit(child, remaining, body) }
            return
        }
        if let child = node.children[step] { visit(child, remaining, body) }
        if let child = node.children[.wildcard] { visit(child, remaining, body) }
    }

    private static func forEachBelow(_ node: Node, _ body: (Int) -> Void) {
        for id in node.entries { body(id) }
        for child in node.children.values { forEachBelow(child, body) }
    }
}
