import TouchpointCore

/// The registered live expressions in dependency order, with an index from dependency paths to
/// expressions. Rebuilt on each registration; a registration that would close a loop is refused.
struct ExpressionGraph {
    /// One registered expression (a class: the evaluation loop hands it around for one retain).
    final class Node {
        let expression: LiveExpression
        let compute: @Sendable (_ get: (String) -> StoreValue?) -> StoreValue?
        let output: JSONPath
        /// Whether removing the output removes an array element (so its siblings move).
        let outputEndsInIndex: Bool
        let dependencies: [JSONPath]
        /// The declared dependencies as written, so `get` can match them without hashing.
        let inputTexts: [String]
        /// The declared dependencies parsed, in the order of ``inputTexts``.
        var inputPaths: [JSONPath] { dependencies }

        init(expression: LiveExpression, output: JSONPath, inputs: [(text: String, path: JSONPath)]) {
            self.expression = expression
            self.compute = expression.compute
            self.output = output
            if case .index? = output.components.last { outputEndsInIndex = true } else { outputEndsInIndex = false }
            self.inputTexts = inputs.map(\.text)
            self.dependencies = inputs.map(\.path)
        }
    }

    /// In topological order: every expression comes after those whose output it depends on.
    private(set) var ordered: [Node] = []
    /// Dependency patterns → position in ``ordered``.
    private(set) var dependents = PathTrie<Int>()
    /// For each position, the positions whose dependencies its output intersects (all later).
    private(set) var successors: [[Int]] = []
    /// ``successors`` flattened: those of position `p` are `successorList[successorStart[p]..<successorStart[p + 1]]`.
    private(set) var successorStart: [Int] = [0]
    private(set) var successorList: [Int] = []

    /// The declared inputs of every position, flattened (so a recomputation reads them without
    /// retaining a nested array): those of position `p` are at `inputStart[p]..<inputStart[p + 1]`.
    private(set) var inputStart: [Int] = [0]
    private(set) var inputTexts: [String] = []
    private(set) var inputPaths: [JSONPath] = []
    /// For each input, the position of the expression whose output is exactly its path, or -1.
    private(set) var inputSources: [Int] = []
    /// For each input, whether its path intersects any expression's output (so reading it from
    /// the tree needs the outputs written there first).
    private(set) var inputsMeetOutputs: [Bool] = []
    /// Output paths → position in ``ordered``.
    private(set) var outputIndex = PathTrie<Int>()
    /// Stands for this graph, for caches of lookups in it (a rebuilt graph has a new one).
    let version = VersionToken()

    var isEmpty: Bool { ordered.isEmpty }

    /// The graph with `expression` added (replacing one with the same id).
    /// - Throws: ``StoreError`` for a bad key path, a wildcard output, overlapping outputs or a cycle.
    func adding(_ expression: LiveExpression) throws(StoreError) -> ExpressionGraph {
        let output: JSONPath
        do {
            output = try JSONPath(parsing: expression.outputKeyPath)
        } catch {
            throw StoreError(
                .invalidKeyPath, keyPath: expression.outputKeyPath, "live expression \(expression.id): \(error)")
        }
        guard !output.hasWildcard, !output.components.isEmpty else {
            throw StoreError(
                .wildcardWrite, keyPath: expression.outputKeyPath,
                "live expression \(expression.id): the output must be one concrete key path")
        }
        var inputs: [(text: String, path: JSONPath)] = []
        for keyPath in expression.dependsOn.sorted() {
            do {
                inputs.append((keyPath, try JSONPath(parsing: keyPath)))
            } catch {
                throw StoreError(.invalidKeyPath, keyPath: keyPath, "live expression \(expression.id): \(error)")
            }
        }
        var nodes = ordered.filter { $0.expression.id != expression.id }
        if let other = nodes.first(where: { $0.output.intersects(output) }) {
            throw StoreError(
                .duplicateOutput, keyPath: expression.outputKeyPath,
                "live expressions \(other.expression.id) and \(expression.id) both write here (\(other.output) and \(output))"
            )
        }
        nodes.append(Node(expression: expression, output: output, inputs: inputs))
        return try ExpressionGraph(sorting: nodes)
    }

    /// The graph without the expression named `id`.
    func removing(id: String) -> ExpressionGraph {
        // Removing a node cannot create a cycle.
        (try? ExpressionGraph(sorting: ordered.filter { $0.expression.id != id })) ?? self
    }

    init() {}

    private init(sorting nodes: [Node]) throws(StoreError) {
        let count = nodes.count
        var successors = [[Int]](repeating: [], count: count)
        var incoming = [Int](repeating: 0, count: count)
        for (i, source) in nodes.enumerated() {
            for (j, target) in nodes.enumerated()
            where target.dependencies.contains(where: { $0.intersects(source.output) }) {
                successors[i].append(j)
                incoming[j] += 1
            }
        }
        // Kahn's algorithm; ties keep registration order so the order is stable.
        var ready = (0..<count).filter { incoming[$0] == 0 }
        var order: [Int] = []
        while !ready.isEmpty {
            let next = ready.removeFirst()
            order.append(next)
            for successor in successors[next] {
                incoming[successor] -= 1
                if incoming[successor] == 0 { ready.append(successor) }
            }
        }
        guard order.count == count else {
            let cycle = Self.findCycle(successors: successors, among: Set(0..<count).subtracting(order))
            let names = cycle.map { nodes[$0].expression.id }.joined(separator: " → ")
            throw StoreError(
                .dependencyCycle, keyPath: nodes[cycle[0]].expression.outputKeyPath,
                "live expressions form a cycle: \(names)")
        }
        ordered = order.map { nodes[$0] }
        for (position, node) in ordered.enumerated() {
            for dependency in node.dependencies { dependents.insert(dependency, position) }
        }
        let ordered = self.ordered
        for (position, node) in ordered.enumerated() { outputIndex.insert(node.output, position) }
        for node in ordered {
            for (text, input) in zip(node.inputTexts, node.dependencies) {
                inputTexts.append(text)
                inputPaths.append(input)
                inputSources.append(ordered.firstIndex { $0.output == input } ?? -1)
                inputsMeetOutputs.append(ordered.contains { $0.output.intersects(input) })
            }
            inputStart.append(inputTexts.count)
        }
        self.successors = ordered.map { source in
            ordered.indices.filter { ordered[$0].dependencies.contains(where: { $0.intersects(source.output) }) }
        }
        for list in self.successors {
            successorList.append(contentsOf: list)
            successorStart.append(successorList.count)
        }
    }

    /// One cycle among `candidates` (nodes left over by Kahn's algorithm), first node repeated at the end.
    private static func findCycle(successors: [[Int]], among candidates: Set<Int>) -> [Int] {
        var state: [Int: Bool] = [:]  // false: on the current path, true: finished
        var path: [Int] = []
        func visit(_ node: Int) -> [Int]? {
            state[node] = false
            path.append(node)
            for next in successors[node] where candidates.contains(next) {
                if state[next] == false, let start = path.firstIndex(of: next) { return Array(path[start...]) + [next] }
                if state[next] == nil, let cycle = visit(next) { return cycle }
            }
            path.removeLast()
            state[node] = true
            return nil
        }
        // Start from the newest node (the one being registered) so the report reads from it.
        for node in candidates.sorted(by: >) where state[node] == nil {
            if let cycle = visit(node) { return cycle }
        }
        return Array(candidates.sorted().prefix(1))
    }
}
