import Foundation
import TouchpointCore

/// Everything one scoped store holds, and the one place its values change: a plain state
/// machine, guarded from outside by the store's lock.
///
/// A change runs in steps: each write is applied in place and checked against the validation
/// rules it touches (lenient fixes applied, strict failures rolled back, all writes of the change
/// together); then the live expressions whose dependencies were touched run in dependency order;
/// then every subscriber whose path intersects a touched path gets its new value, if it differs
/// from the one it had before the change. Old values are captured lazily, just before the first
/// write that can affect a subscriber, so a change costs time in proportion to the subscribers
/// and expressions it affects, not to all of them.
struct StoreState {
    /// Always an object. Expression outputs may be newer in ``slots`` (see ``materialize()``).
    private var root: StoreValue = .object([:])
    var paths = KeyPathCache()
    let scenarioID: String

    // Observation
    private(set) var subscriptions: [Int: Observer] = [:]
    private var subscriptionIndex = PathTrie<Observer>()
    private var changeObservers: [Int: @Sendable (StoreChange) -> Void] = [:]
    private var nextID = 0

    // Rules
    private(set) var validator = Validator(ValidationOptions())
    private(set) var expressions = ExpressionGraph()
    /// The expressions' outputs, by position in ``expressions``.
    private var slots = OutputSlots()
    /// The position of the expression computing now (whose declared inputs `get` matches).
    private var runningExpression = 0

    // Deliveries waiting to be made outside the lock, in change order.
    private var pending: [Delivery] = []
    private var delivering = false

    /// Counts changes; persistence writes when it moved past what was saved.
    private(set) var generation: UInt64 = 0
    /// Whether a persistent scope has a write scheduled.
    var writeScheduled = false

    /// The storage of the last change's context, reused by the next.
    private var spareContext = ChangeContext()

    /// Lets reads from inside a live expression (on the thread that holds the lock) see the state.
    let reentrancy: ReentrancyContext

    #if DEBUG
    private(set) var recentChanges: RecentChanges
    #endif

    init(scenarioID: String, recentChangeLimit: Int, reentrancy: ReentrancyContext) {
        self.scenarioID = scenarioID
        self.reentrancy = reentrancy
        #if DEBUG
        recentChanges = RecentChanges(capacity: recentChangeLimit)
        #endif
    }

    /// What a change did, for the caller to finish outside the lock.
    struct Outcome {
        var result: ValidationResult = .ok
        var changed = false
        /// Whether the caller must drain deliveries (no other drain is running).
        var mustDrain = false
        /// The first deliveries to make, when the caller drains (later ones wait in the state).
        var deliveries: [Delivery] = []
        /// Messages to log as warnings (lenient fixes, expression skips) after unlocking.
        var warnings: [String] = []
        /// Problems to report (the runtime cycle guard) after unlocking.
        var problems: [StoreError] = []
    }

    /// One change in progress.
    struct ChangeContext {
        /// An index node whose single-path subscribers the change may affect, with the value at
        /// the node's path before the change (worked out once for all of them).
        struct CapturedNode {
            let node: PathTrie<Observer>.Node
            var old: StoreValue?
            /// The value after the change, valid while ``knowsNew``: set by a write exactly at the
            /// node's path, so the change need not look it up again.
            var new: StoreValue?
            var knowsNew = false
            /// Whether ``old`` is still to come from the write being made (what it replaced).
            var awaitsOld = false
        }

        var capturedNodes: [CapturedNode] = []
        /// The nodes in ``capturedNodes``, for a quick membership test once there are many.
        var capturedNodeIDs: [ObjectIdentifier: Int] = [:]

        /// Where `node` is in ``capturedNodes``, if it was captured (a linear scan while there are few).
        func position(of node: PathTrie<Observer>.Node) -> Int? {
            capturedNodes.count < 16
                ? capturedNodes.firstIndex { $0.node === node } : capturedNodeIDs[ObjectIdentifier(node)]
        }

        mutating func capture(_ node: PathTrie<Observer>.Node, old: StoreValue?, awaitsOld: Bool) {
            capturedNodes.append(CapturedNode(node: node, old: old, awaitsOld: awaitsOld))
            if capturedNodes.count == 16 {
                for (position, captured) in capturedNodes.enumerated() {
                    capturedNodeIDs[ObjectIdentifier(captured.node)] = position
                }
            } else if capturedNodes.count > 16 {
                capturedNodeIDs[ObjectIdentifier(node)] = capturedNodes.count - 1
            }
        }

        /// Settles the captured node at `position` after the write exactly at its path failed
        /// (leaving the tree as it was).
        mutating func settleFailed(_ position: Int, in root: StoreValue) {
            guard capturedNodes[position].awaitsOld else { return }
            capturedNodes[position].old = root.resolve(capturedNodes[position].node.path)
            capturedNodes[position].awaitsOld = false
        }

        /// Records what the write just made exactly at the path of the captured node at `position`.
        mutating func settle(_ position: Int, replaced old: StoreValue?, with new: StoreValue?) {
            if capturedNodes[position].awaitsOld {
                capturedNodes[position].old = old
                capturedNodes[position].awaitsOld = false
            }
            capturedNodes[position].new = new
            capturedNodes[position].knowsNew = true
        }

        /// Forgets the new values the writes supplied (after a rollback rewrote the tree).
        mutating func forgetNewValues() {
            for position in capturedNodes.indices where capturedNodes[position].knowsNew {
                capturedNodes[position].knowsNew = false
                capturedNodes[position].new = nil
            }
        }

        /// Empties the context, keeping its storage for the next change.
        mutating func clear() {
            capturedNodes.removeAll(keepingCapacity: true)
            if !capturedNodeIDs.isEmpty { capturedNodeIDs.removeAll(keepingCapacity: true) }
            if !capturedCombined.isEmpty { capturedCombined.removeAll(keepingCapacity: true) }
            patches.removeAll(keepingCapacity: true)
            patchCount = 0
            recordsPatches = true
            recordsUndo = true
            touched.removeAll(keepingCapacity: true)
            undo.removeAll(keepingCapacity: true)
            warnings.removeAll()
            problems.removeAll()
        }

        /// Multi-path subscribers the change may affect, with their value before the change.
        var capturedCombined: [Int: (subscription: Observer, old: StoreValue?)] = [:]
        /// The patches, when someone will see them (change observers, the debug inspector).
        var patches: [StorePatch] = []
        /// How many patches the change has made, recorded or not.
        var patchCount = 0
        /// Whether patches are kept (else only counted).
        var recordsPatches = true
        /// Whether writes record how to undo them (not needed when nothing after a write can
        /// fail: no validation rules and a single operation).
        var recordsUndo = true
        /// Paths written, in order, for finding the live expressions to run.
        var touched: [JSONPath] = []
        /// (path, value before) to restore, in reverse, when the change is rolled back.
        var undo: [(JSONPath, StoreValue?)] = []
        var warnings: [String] = []
        var problems: [StoreError] = []

        mutating func record(_ patch: @autoclosure () -> StorePatch) {
            patchCount += 1
            if recordsPatches { patches.append(patch()) }
        }

        mutating func dropPatches(after count: Int) {
            patchCount = count
            if patches.count > count { patches.removeSubrange(count...) }
        }
    }

    /// A context for a new change, reusing the storage of the last one.
    private mutating func makeContext(operations: Int) -> ChangeContext {
        var context = ChangeContext()
        swap(&context, &spareContext)
        #if !DEBUG
        context.recordsPatches = !changeObservers.isEmpty
        #endif
        context.recordsUndo = operations > 1 || !validator.isEmpty
        return context
    }

    /// Keeps a finished context's storage for the next change.
    private mutating func recycle(_ context: inout ChangeContext) {
        context.clear()
        swap(&context, &spareContext)
    }

    /// A copy with the same values, rules and expressions but no observers, for a transaction to
    /// work on; its computations read through `reentrancy`.
    mutating func detached(reentrancy: ReentrancyContext) -> StoreState {
        materialize()
        var copy = StoreState(scenarioID: scenarioID, recentChangeLimit: 0, reentrancy: reentrancy)
        copy.root = root
        copy.validator = validator
        copy.expressions = expressions
        copy.slots = OutputSlots(count: expressions.ordered.count)
        return copy
    }

    /// Counts a change that happened outside the state machine (data dropped on open), so the
    /// next flush writes.
    mutating func markDirty() { generation &+= 1 }

    // MARK: Reading

    mutating func value(at entry: KeyPathCache.Entry) -> StoreValue? {
        materialize()
        return root.resolve(entry.path)
    }

    mutating func snapshot() -> [String: StoreValue] {
        materialize()
        return root.objectValue ?? [:]
    }

    /// Every value, with the expressions' latest outputs written in.
    mutating func materializedRoot() -> StoreValue {
        materialize()
        return root
    }

    /// Writes the stale expression outputs into the tree, so it holds every current value.
    private mutating func materialize() {
        guard slots.hasStale else { return }
        let nodes = expressions.ordered
        for position in slots.takeStale() {
            var created: Int?
            // Cannot fail: a slot is known only after a write of a value to its output succeeded,
            // and a write that could change the parents since would have made it unknown.
            do {
                _ = try root.write(slots.value(position), at: nodes[position].output, created: &created)
            } catch {
                assertionFailure("a stale output could not be written in at \(nodes[position].output): \(error)")
            }
        }
    }

    /// Readies the tree for a write at `scope`: writes in the stale outputs the write can see, and
    /// forgets the slots of the outputs it can change.
    private mutating func prepareWrite(at scope: JSONPath, _ entry: KeyPathCache.Entry?) {
        guard !expressions.isEmpty else { return }
        var reached: [Int] = []
        let positions: [Int]
        if let entry, entry.path == scope {
            positions = entry.outputs(in: expressions)
        } else {
            expressions.outputIndex.forEachIntersecting(scope) { reached.append($0) }
            positions = reached
        }
        guard !positions.isEmpty else { return }
        if slots.hasStale { materialize() }
        for position in positions { slots.forget(position) }
    }

    // MARK: Changing

    /// Applies `operations` as one change: all of them or (when one fails) none.
    mutating func apply(_ operations: [StoreOperation], transactionID: UUID?, depth: Int) -> Outcome {
        var context = makeContext(operations: operations.count)
        defer { recycle(&context) }
        for operation in operations {
            if case .failed(let reason) = apply(operation, &context) {
                rollback(&context, to: 0)
                return Outcome(result: .failed(reason: reason), warnings: context.warnings)
            }
        }
        return finish(&context, transactionID: transactionID, depth: depth, initiallyDirty: [])
    }

    /// Applies one operation as one change.
    mutating func apply(_ operation: StoreOperation, depth: Int) -> Outcome {
        var context = makeContext(operations: 1)
        defer { recycle(&context) }
        if case .failed(let reason) = apply(operation, &context) {
            rollback(&context, to: 0)
            return Outcome(result: .failed(reason: reason), warnings: context.warnings)
        }
        return finish(&context, transactionID: nil, depth: depth, initiallyDirty: [])
    }

    /// What ``apply(_:transactionID:depth:)`` would do, without doing it.
    func dryRun(_ operations: [StoreOperation]) -> ValidationResult {
        var copy = self
        copy.subscriptions = [:]
        var context = ChangeContext()
        for operation in operations {
            if case .failed(let reason) = copy.apply(operation, &context) { return .failed(reason: reason) }
        }
        return .ok
    }

    private mutating func apply(_ operation: StoreOperation, _ context: inout ChangeContext) -> ValidationResult {
        do throws(StoreError) {
            switch operation {
            case .set(let keyPath, let value):
                let entry = try paths.entry(keyPath)
                return try write(value, at: entry.path, canonical: entry.canonical, op: .set, entry: entry, &context)
            case .remove(let keyPath):
                let entry = try paths.entry(keyPath)
                return try write(nil, at: entry.path, canonical: entry.canonical, op: .remove, entry: entry, &context)
            case .merge(let keyPath, let members):
                let entry = try paths.entry(keyPath)
                guard !entry.path.hasWildcard else {
                    throw StoreError(.wildcardWrite, keyPath: keyPath, "a merge needs a concrete path, not a pattern")
                }
                prepareWrite(at: entry.path, entry)
                let merged = StoreValue.mergePatch(root.value(at: entry.path.components[...]), members)
                return try write(merged, at: entry.path, canonical: entry.canonical, op: .merge, entry: entry, &context)
            case .replaceAll(let members):
                return try write(.object(members), at: .root, canonical: "$", op: .set, &context)
            }
        } catch {
            return .failed(reason: error.description)
        }
    }

    /// Writes one value (nil removes), checks the rules it touches, and records the patch.
    private mutating func write(
        _ value: StoreValue?, at path: JSONPath, canonical: String, op: StorePatch.Op,
        entry: KeyPathCache.Entry? = nil, _ context: inout ChangeContext
    ) throws(StoreError) -> ValidationResult {
        if path.components.isEmpty, let value, value.objectValue == nil {
            throw StoreError(.typeMismatch, keyPath: "$", "the root must be an object, not \(value.kindName)")
        }
        let mark = context.undo.count
        let old = try mutate(value, at: path, entry, &context)
        if old == value {
            // Writing what is already there (or removing nothing) is not a change.
            context.touched.removeLast()
            return .ok
        }
        var extraPatches: [StorePatch] = []
        var fixedInside = false
        if !validator.isEmpty {
            let scope = Self.scope(of: path, removing: value == nil)
            for finding in validator.check(root, around: scope) {
                switch finding {
                case .rejected(let reason):
                    rollback(&context, to: mark)
                    return .failed(reason: reason)
                case .fixed(let fixPath, let fixed, let reason):
                    let before = try mutate(fixed, at: fixPath, nil, &context)
                    context.warnings.append(
                        "\(reason); lenient validation wrote \(ValidationRule.excerpt(fixed)) instead")
                    if path.isPrefix(of: fixPath) {
                        fixedInside = true
                    } else {
                        extraPatches.append(
                            StorePatch(op: .set, keyPath: fixPath.description, oldValue: before, newValue: fixed))
                    }
                }
            }
        }
        context.record(
            StorePatch(
                op: op, keyPath: canonical, oldValue: old,
                newValue: fixedInside ? root.value(at: path.components[...]) : value))
        for patch in extraPatches { context.record(patch) }
        return .ok
    }

    /// The one primitive that changes `root` for a write: captures the subscribers it can affect,
    /// writes, and records how to undo it. `entry`, when given, is the cache entry of `path`.
    private mutating func mutate(
        _ value: StoreValue?, at path: JSONPath, _ entry: KeyPathCache.Entry?, _ context: inout ChangeContext
    ) throws(StoreError) -> StoreValue? {
        let scope = Self.scope(of: path, removing: value == nil)
        prepareWrite(at: scope, entry)
        let exact = capture(scope, exactly: scope == path, entry, &context)
        // Removing an array element: undo restores the whole array, as it is now.
        let arrayBefore =
            context.recordsUndo && scope.components.count != path.components.count
            ? root.value(at: scope.components[...]) : nil
        var created: Int?
        let old: StoreValue?
        do {
            old = try root.write(value, at: path, created: &created)
        } catch {
            if let exact { context.settleFailed(exact, in: root) }
            throw error
        }
        if let exact {
            // Removing the root leaves an empty object.
            context.settle(exact, replaced: old, with: path.components.isEmpty ? value ?? .object([:]) : value)
        }
        context.touched.append(scope)
        guard context.recordsUndo else { return old }
        if scope.components.count != path.components.count {
            context.undo.append((scope, arrayBefore))
        } else if let created {
            // Parents were created: undo removes the highest of them.
            context.undo.append((JSONPath(components: Array(path.components.prefix(created + 1))), nil))
        } else {
            context.undo.append((path, old))
        }
        return old
    }

    /// Removing an array element shifts the ones after it, so the whole array is what changed.
    private static func scope(of path: JSONPath, removing: Bool) -> JSONPath {
        if removing, case .index? = path.components.last { return path.parent }
        return path
    }

    private mutating func rollback(_ context: inout ChangeContext, to mark: Int) {
        guard context.undo.count > mark else { return }
        while context.undo.count > mark {
            let (path, value) = context.undo.removeLast()
            prepareWrite(at: path, nil)
            _ = try? root.write(value, at: path)
        }
        context.forgetNewValues()
    }

    /// Captures what the subscribers a write at `path` can affect saw before it. Returns the
    /// position in `context.capturedNodes` of the node exactly at `path` (when `exactly`), whose
    /// old and new values the write itself supplies, so they need no lookup.
    private mutating func capture(
        _ path: JSONPath, exactly: Bool, _ entry: KeyPathCache.Entry?, _ context: inout ChangeContext
    ) -> Int? {
        guard !subscriptions.isEmpty else { return nil }
        let nodes: [PathTrie<Observer>.Node]
        if let entry, entry.path == path {
            nodes = entry.subscriberNodes(in: subscriptionIndex)
        } else {
            var reached: [PathTrie<Observer>.Node] = []
            subscriptionIndex.forEachNode(intersecting: path) { reached.append($0) }
            nodes = reached
        }
        var exact: Int?
        for node in nodes {
            let isExact = exactly && node.path.components.count == path.components.count && node.path == path
            if let position = context.position(of: node) {
                // Captured by an earlier write of the change: its old value stands.
                if isExact {
                    exact = position
                } else {
                    context.capturedNodes[position].knowsNew = false
                }
                continue
            }
            var single = false
            for subscription in node.entries {
                if !subscription.combined {
                    single = true
                } else if context.capturedCombined.index(forKey: subscription.id) == nil {
                    context.capturedCombined[subscription.id] = (subscription, subscription.value(in: root))
                }
            }
            guard single else { continue }
            context.capture(node, old: isExact ? nil : root.resolve(node.path), awaitsOld: isExact)
            if isExact { exact = context.capturedNodes.count - 1 }
        }
        return exact
    }

    /// Runs the live expressions, then queues deliveries for what changed.
    private mutating func finish(
        _ context: inout ChangeContext, transactionID: UUID?, depth: Int, initiallyDirty: [Int]
    ) -> Outcome {
        if !expressions.isEmpty { runExpressions(&context, initiallyDirty: initiallyDirty) }
        var outcome = Outcome(warnings: context.warnings, problems: context.problems)
        guard context.patchCount > 0 else { return outcome }
        outcome.changed = true
        generation &+= 1
        // Deliveries go straight to the caller when nobody is draining, else into the queue.
        var deliveries: [Delivery] = []
        for captured in context.capturedNodes {
            let new = captured.knowsNew ? captured.new : root.resolve(captured.node.path)
            guard new != captured.old else { continue }
            for subscription in captured.node.entries where !subscription.combined {
                deliveries.append(
                    Delivery(depth: depth, order: subscription.id, target: .value(subscription.deliver, new)))
            }
        }
        for (subscription, old) in context.capturedCombined.values {
            let new = subscription.value(in: root)
            if new != old {
                deliveries.append(
                    Delivery(depth: depth, order: subscription.id, target: .value(subscription.deliver, new)))
            }
        }
        // Subscribers hear about a change in the order they subscribed.
        if deliveries.count > 1 { deliveries.sort { $0.order < $1.order } }
        #if DEBUG
        let recordsChanges = true
        #else
        let recordsChanges = !changeObservers.isEmpty
        #endif
        if recordsChanges {
            let change = StoreChange(scenarioID: scenarioID, patches: context.patches, transactionID: transactionID)
            #if DEBUG
            recentChanges.append(change)
            #endif
            for id in changeObservers.keys.sorted() {
                deliveries.append(Delivery(depth: depth, order: id, target: .change(changeObservers[id]!, change)))
            }
        }
        guard !deliveries.isEmpty else { return outcome }
        if delivering {
            pending.append(contentsOf: deliveries)
        } else {
            delivering = true
            outcome.mustDrain = true
            outcome.deliveries = deliveries
        }
        return outcome
    }

    // MARK: Live expressions

    /// Which expressions a change still has to run, and which ran.
    private struct ExpressionRun {
        var dirty: [Bool]
        var ran: [Bool]
        /// The lowest position that may be dirty and not yet run.
        var cursor = 0
        /// How many of the change's touched paths have been matched against dependencies.
        var seen = 0

        init(count: Int, initiallyDirty: [Int]) {
            dirty = [Bool](repeating: false, count: count)
            ran = [Bool](repeating: false, count: count)
            for position in initiallyDirty { dirty[position] = true }
        }

        /// Marks `dependent` dirty, or reports that it already ran (the runtime cycle guard).
        /// Kept out of line: the hot path (``StoreState/markSuccessors(of:_:_:)``) only calls it
        /// for an expression that already ran.
        @inline(never)
        mutating func mark(
            _ dependent: Int, by writer: Int?, nodes: [ExpressionGraph.Node], _ context: inout ChangeContext
        ) {
            guard !ran[dependent] else {
                if let writer, !context.problems.contains(where: { $0.code == .dependencyCycle }) {
                    context.problems.append(
                        StoreError(
                            .dependencyCycle, keyPath: nodes[writer].expression.outputKeyPath,
                            "live expression \(nodes[writer].expression.id) changed an input of \(nodes[dependent].expression.id), which already ran in this change; the runtime cycle guard did not run it again"
                        ))
                }
                return
            }
            dirty[dependent] = true
            if dependent < cursor { cursor = dependent }
        }
    }

    /// Recomputes, in dependency order, each expression whose dependencies the change touched,
    /// at most once. An expression whose inputs change after it ran (a loop the registration
    /// check could not see, e.g. through a lenient fix of a parent value) is not run again: the
    /// change reports it as a ``StoreError/Code/dependencyCycle`` problem instead of looping.
    private mutating func runExpressions(_ context: inout ChangeContext, initiallyDirty: [Int]) {
        let nodes = expressions.ordered
        let dependents = expressions.dependents
        let successors = expressions.successors
        var run = ExpressionRun(count: nodes.count, initiallyDirty: initiallyDirty)
        // Matches the touched paths not yet seen against the dependencies; a path that is exactly
        // the writer's output uses the dependents found at registration.
        func markTouched(by writer: Int?, _ run: inout ExpressionRun, _ context: inout ChangeContext) {
            while run.seen < context.touched.count {
                let path = context.touched[run.seen]
                run.seen += 1
                if let writer, path == nodes[writer].output {
                    for dependent in successors[writer] { run.mark(dependent, by: writer, nodes: nodes, &context) }
                } else {
                    dependents.forEachIntersecting(path) { run.mark($0, by: writer, nodes: nodes, &context) }
                }
            }
        }
        // What the running expression reads, through its `get` or through the store itself (on
        // this thread): other expressions' outputs from their slots; the rest from the tree, with
        // the stale outputs written in first where they can be seen.
        func get(_ keyPath: String) -> StoreValue? {
            // The declared inputs are matched by text first, which costs no hashing.
            var input = expressions.inputStart[runningExpression]
            let end = expressions.inputStart[runningExpression + 1]
            while input < end {
                if expressions.inputTexts[input] == keyPath {
                    let source = expressions.inputSources[input]
                    if source >= 0 && slots.isKnown(source) { return slots.value(source) }
                    if expressions.inputsMeetOutputs[input] { materialize() }
                    return root.resolve(expressions.inputPaths[input])
                }
                input += 1
            }
            guard let entry = try? paths.entry(keyPath) else { return nil }
            materialize()
            return root.resolve(entry.path)
        }
        let reentrancy = self.reentrancy
        withoutActuallyEscaping(get) { get in
            reentrancy.reader = get
            defer { reentrancy.reader = nil }
            markTouched(by: nil, &run, &context)
            while run.cursor < nodes.count {
                let position = run.cursor
                run.cursor += 1
                guard run.dirty[position], !run.ran[position] else { continue }
                run.ran[position] = true
                let node = nodes[position]
                runningExpression = position
                // Called with no access to the state in progress: `get` reads and writes it.
                let result = node.compute(get)
                if validator.isEmpty && !context.recordsUndo {
                    // Nothing can reject the write and nothing will undo it: write directly.
                    writeOutput(result, of: node, at: position, &run, &context)
                    continue
                }
                let undoMark = context.undo.count
                let patchMark = context.patchCount
                let recordedUndo = context.recordsUndo
                // An expression's write can fail after it is made (validation), so it can be undone.
                context.recordsUndo = recordedUndo || !validator.isEmpty
                let outcome: ValidationResult
                do throws(StoreError) {
                    outcome = try write(
                        result, at: node.output, canonical: node.expression.outputKeyPath,
                        op: result == nil ? .remove : .set,
                        &context)
                } catch {
                    outcome = .failed(reason: error.description)
                }
                context.recordsUndo = recordedUndo
                if case .failed(let reason) = outcome {
                    rollback(&context, to: undoMark)
                    context.dropPatches(after: patchMark)
                    context.touched.removeSubrange(Swift.min(run.seen, context.touched.count)...)
                    context.warnings.append("live expression \(node.expression.id) not written: \(reason)")
                    continue
                }
                if !recordedUndo && context.undo.count > undoMark { context.undo.removeSubrange(undoMark...) }
                if context.patchCount == patchMark && node.expression.policy == .alwaysWrite {
                    // The result equals the value already there; alwaysWrite records it anyway.
                    context.record(
                        StorePatch(op: .set, keyPath: node.output.description, oldValue: result, newValue: result))
                }
                markTouched(by: position, &run, &context)
            }
        }
    }

    /// An expression's write when nothing can reject it and nothing will undo it: into its slot
    /// when no subscriber can see the output (the tree catches up when read), else into the tree.
    /// Dependents are marked from the graph instead of the touched-path log.
    private mutating func writeOutput(
        _ result: StoreValue?, of node: ExpressionGraph.Node, at position: Int, _ run: inout ExpressionRun,
        _ context: inout ChangeContext
    ) {
        let removesElement = result == nil && node.outputEndsInIndex
        let old: StoreValue?
        if slots.isKnown(position) && !node.outputEndsInIndex
            && (subscriptions.isEmpty || !isObserved(position, node))
        {
            // The hot path of a recomputation: the slot only, no lookup, no copy of the old value
            // unless a patch records it.
            guard let replaced = slots.replace(position, with: result, keepingOld: context.recordsPatches) else {
                if node.expression.policy == .alwaysWrite {
                    context.record(
                        StorePatch(op: .set, keyPath: node.expression.outputKeyPath, oldValue: result, newValue: result)
                    )
                }
                return
            }
            context.patchCount += 1
            if context.recordsPatches {
                context.patches.append(
                    StorePatch(
                        op: result == nil ? .remove : .set, keyPath: node.expression.outputKeyPath, oldValue: replaced,
                        newValue: result))
            }
            markSuccessors(of: position, &run, &context)
            return
        } else {
            let scope = removesElement ? node.output.parent : node.output
            prepareWrite(at: scope, nil)
            let exact = capture(scope, exactly: !removesElement, nil, &context)
            do throws(StoreError) {
                var created: Int?
                old = try root.write(result, at: node.output, created: &created)
            } catch {
                if let exact { context.settleFailed(exact, in: root) }
                context.warnings.append("live expression \(node.expression.id) not written: \(error)")
                return
            }
            if let exact { context.settle(exact, replaced: old, with: result) }
            // A slot is known only after a value was written: then its parents exist, so later
            // writes of the slot to the tree cannot fail.
            if result != nil && !node.outputEndsInIndex { slots.set(position, result, stale: false) }
        }
        if old == result {
            if node.expression.policy == .alwaysWrite {
                context.record(
                    StorePatch(op: .set, keyPath: node.expression.outputKeyPath, oldValue: old, newValue: old))
            }
            return
        }
        context.record(
            StorePatch(
                op: result == nil ? .remove : .set, keyPath: node.expression.outputKeyPath, oldValue: old,
                newValue: result))
        if removesElement {
            let scope = node.output.parent
            context.touched.append(scope)
            expressions.dependents.forEachIntersecting(scope) {
                run.mark($0, by: position, nodes: expressions.ordered, &context)
            }
            run.seen = context.touched.count
        } else {
            markSuccessors(of: position, &run, &context)
        }
    }

    /// Marks dirty the expressions that read the output of `position`.
    private mutating func markSuccessors(of position: Int, _ run: inout ExpressionRun, _ context: inout ChangeContext) {
        for index in expressions.successorStart[position]..<expressions.successorStart[position + 1] {
            let dependent = expressions.successorList[index]
            if run.ran[dependent] {
                run.mark(dependent, by: position, nodes: expressions.ordered, &context)
            } else {
                run.dirty[dependent] = true
                if dependent < run.cursor { run.cursor = dependent }
            }
        }
    }

    /// Whether a subscriber's path intersects the output of the expression at `position`.
    private mutating func isObserved(_ position: Int, _ node: ExpressionGraph.Node) -> Bool {
        let index = subscriptionIndex
        return slots.isObserved(position, version: index.version) {
            var observed = false
            index.forEachNode(intersecting: node.output) { _ in observed = true }
            return observed
        }
    }

    // MARK: Subscriptions

    /// Adds a subscriber: `makeDeliver` gets the current value and returns what to call with
    /// later ones; both happen under the lock, so no change can slip between them.
    mutating func subscribe(
        _ entries: [KeyPathCache.Entry], keyPaths: [String], combined: Bool, kind: String,
        makeDeliver: (StoreValue?) -> @Sendable (StoreValue?) -> Void
    ) -> Int {
        // Outputs not yet in the tree are never observed: the subscriber's values come from it.
        materialize()
        nextID += 1
        let paths = entries.map(\.path)
        let current = Observer.value(of: paths, keyPaths: keyPaths, combined: combined, in: root)
        let deliver = makeDeliver(current)
        let subscription = Observer(
            id: nextID, paths: paths, keyPaths: keyPaths, combined: combined, kind: kind, deliver: deliver)
        subscriptions[nextID] = subscription
        for path in paths { subscriptionIndex.insert(path, subscription) }
        return nextID
    }

    mutating func unsubscribe(_ id: Int) {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        for path in subscription.paths { subscriptionIndex.remove(path) { $0 === subscription } }
    }

    mutating func observeChanges(_ observer: @escaping @Sendable (StoreChange) -> Void) -> Int {
        nextID += 1
        changeObservers[nextID] = observer
        return nextID
    }

    mutating func stopObservingChanges(_ id: Int) {
        changeObservers.removeValue(forKey: id)
    }

    /// Takes the deliveries queued so far; when there are none, the drain ends.
    mutating func takeDeliveries() -> [Delivery] {
        guard !pending.isEmpty else {
            delivering = false
            return []
        }
        var batch: [Delivery] = []
        swap(&batch, &pending)
        return batch
    }

    // MARK: Configuration

    /// Installs validation rules, then fills in the defaults of missing required values (and, in
    /// lenient mode, fixes what breaks the rules) as one change.
    mutating func configureValidation(_ options: ValidationOptions, depth: Int) -> Outcome {
        materialize()
        validator = Validator(options)
        var context = ChangeContext()
        context.warnings.append(contentsOf: validator.problems)
        for (path, value) in validator.missingDefaults(in: root) {
            if (try? write(value, at: path, canonical: path.description, op: .set, &context)) == nil {
                context.warnings.append("\(path): could not write the default value")
            }
        }
        if validator.mode == .lenient {
            for finding in validator.check(root, around: .root) {
                guard case .fixed(let path, let value, let reason) = finding else { continue }
                if let old = try? mutate(value, at: path, nil, &context) {
                    context.record(StorePatch(op: .set, keyPath: path.description, oldValue: old, newValue: value))
                    context.warnings.append(
                        "\(reason); lenient validation wrote \(ValidationRule.excerpt(value)) instead")
                }
            }
        }
        return finish(&context, transactionID: nil, depth: depth, initiallyDirty: [])
    }

    /// Registers a live expression and computes it once.
    mutating func register(_ expression: LiveExpression, depth: Int) throws(StoreError) -> Outcome {
        let graph = try expressions.adding(expression)
        materialize()
        expressions = graph
        slots = OutputSlots(count: graph.ordered.count)
        let position = expressions.ordered.firstIndex { $0.expression.id == expression.id }!
        var context = ChangeContext()
        return finish(&context, transactionID: nil, depth: depth, initiallyDirty: [position])
    }

    mutating func unregisterExpression(id: String) {
        materialize()
        expressions = expressions.removing(id: id)
        slots = OutputSlots(count: expressions.ordered.count)
    }

    /// Replaces every value without validation (scenario end, version drop, loading from disk),
    /// then fills required defaults, as one change.
    mutating func reset(to members: [String: StoreValue], depth: Int) -> Outcome {
        materialize()
        var context = ChangeContext()
        let old = root
        _ = try? mutate(.object(members), at: .root, nil, &context)
        if old != root {
            context.record(StorePatch(op: .set, keyPath: "$", oldValue: old, newValue: root))
        }
        for (path, value) in validator.missingDefaults(in: root) {
            _ = try? write(value, at: path, canonical: path.description, op: .set, &context)
        }
        return finish(&context, transactionID: nil, depth: depth, initiallyDirty: Array(expressions.ordered.indices))
    }
}
