import TouchpointCore

/// An index of entries by path (patterns allowed), answering "which entries can a change at this
/// path affect?" in time that grows with the matching entries, not with all of them.
///
/// An entry matches a changed path when its path is an ancestor of it, equal to it or under it,
/// step by step, where a wildcard step (on either side) matches any step. Entries registered
/// under the same path share one node, so a caller can work out that path's value once for all
/// of them.
final class PathTrie<Entry> {
    final class Node {
        /// The path of the entries held here.
        let path: JSONPath
        /// Children by concrete step (key or index).
        var children: [JSONPath.Component: Node] = [:]
        /// The child for a wildcard step, kept apart so a lookup costs no hashing.
        var wildcard: Node?
        var entries: [Entry] = []
        /// Entries in this node and below it.
        var count = 0

        init(path: JSONPath) { self.path = path }

        func child(_ component: JSONPath.Component) -> Node? {
            component == .wildcard ? wildcard : children[component]
        }
    }

    private let root = Node(path: .root)

    /// Replaced on every insertion and removal, for caches of lookups (see ``VersionToken``).
    private(set) var version = VersionToken()

    /// Whether nothing is indexed.
    var isEmpty: Bool { root.count == 0 }

    func insert(_ path: JSONPath, _ entry: Entry) {
        version = VersionToken()
        var node = root
        node.count += 1
        for (depth, component) in path.components.enumerated() {
            if let child = node.child(component) {
                node = child
            } else {
                let child = Node(path: JSONPath(components: Array(path.components.prefix(depth + 1))))
                if component == .wildcard { node.wildcard = child } else { node.children[component] = child }
                node = child
            }
            node.count += 1
        }
        node.entries.append(entry)
    }

    /// Removes the first entry under `path` that `matches` accepts.
    func remove(_ path: JSONPath, where matches: (Entry) -> Bool) {
        var trail: [Node] = [root]
        var node = root
        for component in path.components {
            guard let child = node.child(component) else { return }
            node = child
            trail.append(node)
        }
        guard let position = node.entries.firstIndex(where: matches) else { return }
        version = VersionToken()
        node.entries.remove(at: position)
        for visited in trail { visited.count -= 1 }
        // Prune the branch that no longer holds anything.
        for depth in stride(from: path.components.count, to: 0, by: -1) where trail[depth].count == 0 {
            let step = path.components[depth - 1]
            if step == .wildcard {
                trail[depth - 1].wildcard = nil
            } else {
                trail[depth - 1].children.removeValue(forKey: step)
            }
        }
    }

    /// Calls `body` with every entry whose path intersects `path` (an entry inserted under
    /// several paths may come more than once).
    func forEachIntersecting(_ path: JSONPath, _ body: (Entry) -> Void) {
        forEachNode(intersecting: path) { node in
            for entry in node.entries { body(entry) }
        }
    }

    /// Calls `body` with every node that holds entries and whose path intersects `path`, once each.
    func forEachNode(intersecting path: JSONPath, _ body: (Node) -> Void) {
        guard root.count > 0 else { return }
        visit(root, path.components[...], body)
    }

    private func visit(_ node: Node, _ rest: ArraySlice<JSONPath.Component>, _ body: (Node) -> Void) {
        guard let step = rest.first else {
            Self.forEachBelow(node, body)
            return
        }
        if !node.entries.isEmpty { body(node) }
        let remaining = rest.dropFirst()
        if step == .wildcard {
            for child in node.children.values { visit(child, remaining, body) }
        } else if !node.children.isEmpty, let child = node.children[step] {
            visit(child, remaining, body)
        }
        if let child = node.wildcard { visit(child, remaining, body) }
    }

    private static func forEachBelow(_ node: Node, _ body: (Node) -> Void) {
        if !node.entries.isEmpty { body(node) }
        for child in node.children.values { forEachBelow(child, body) }
        if let child = node.wildcard { forEachBelow(child, body) }
    }
}

extension PathTrie where Entry: Equatable {
    /// Removes `entry` from under `path`.
    func remove(_ path: JSONPath, _ entry: Entry) {
        remove(path) { $0 == entry }
    }
}
