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
    /// Always an object.
    private(set) var root: StoreValue = .object([:])
    var paths = KeyPathCache()
    let scenarioID: String

    // Observation
    private(set) var subscriptions: [Int: Subscription] = [:]
    private var subscriptionIndex = PathTrie()
    private var changeObservers: [Int: @Sendable (StoreChange) -> Void] = [:]
    private var nextID = 0

    // Rules
    private(set) var validator = Validator(ValidationOptions())
    private(set) var expressions = ExpressionGraph()

    // Deliveries waiting to be made outside the lock, in change order.
    private var pending: [Delivery] = []
    private var delivering = false

    /// Counts changes; persistence writes when it moved past what was saved.
    private(set) var generation: UInt64 = 0
    /// Whether a persistent scope has a write scheduled.
    var writeScheduled = false

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
        /// Messages to log as warnings (lenient fixes, expression skips) after unlocking.
        var warnings: [String] = []
        /// Problems to report (the runtime cycle guard) after unlocking.
        var problems: [StoreError] = []
    }

    /// One change in progress.
    struct ChangeContext {
        /// Subscription id → its value before the change.
        var captured: [Int: StoreValue?] = [:]
        var patches: [StorePatch] = []
        /// Paths written, in order, for finding the live expressions to run.
        var touched: [JSONPath] = []
        /// (path, value before) to restore, in reverse, when the change is rolled back.
        var undo: [(JSONPath, StoreValue?)] = []
        var warnings: [String] = []
        var problems: [StoreError] = []
    }

    /// A copy with the same values, rules and expressions but no observers, for a transaction to
    /// work on; its computations read through `reentrancy`.
    func detached(reentrancy: ReentrancyContext) -> StoreState {
        var copy = StoreState(scenarioID: scenarioID, recentChangeLimit: 0, reentrancy: reentrancy)
        copy.root = root
        copy.validator = validator
        copy.expressions = expressions
        return copy
    }

    /// Counts a change that happened outside the state machine (data dropped on open), so the
    /// next flush writes.
    mutating func markDirty() { generation &+= 1 }

    // MARK: Reading

    func value(at entry: KeyPathCache.Entry) -> StoreValue? { root.resolve(entry.path) }

    var snapshot: [String: StoreValue] { root.objectValue ?? [:] }

    // MARK: Changing

    /// Applies `operations` as one change: all of them or (when one fails) none.
    mutating func apply(_ operations: [StoreOperation], transactionID: UUID?, depth: Int) -> Outcome {
        var context = ChangeContext()
        for operation in operations {
            if case .failed(let reason) = apply(operation, &context) {
                rollback(&context, to: 0)
                return Outcome(result: .failed(reason: reason), warnings: context.warnings)
            }
        }
        return finish(&context, transactionID: transactionID, depth: depth, initiallyDirty: [])
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
                return try write(value, at: entry.path, canonical: entry.canonical, op: .set, &context)
            case .remove(let keyPath):
                let entry = try paths.entry(keyPath)
                return try write(nil, at: entry.path, canonical: entry.canonical, op: .remove, &context)
            case .merge(let keyPath, let members):
                let entry = try paths.entry(keyPath)
                guard !entry.path.hasWildcard else {
                    throw StoreError(.wildcardWrite, keyPath: keyPath, "a merge needs a concrete path, not a pattern")
                }
                let merged = StoreValue.mergePatch(root.value(at: entry.path.components[...]), members)
                return try write(merged, at: entry.path, canonical: entry.canonical, op: .merge, &context)
            case .replaceAll(let members):
                return try write(.object(members), at: .root, canonical: "$", op: .set, &context)
            }
        } catch {
            return .failed(reason: error.description)
        }
    }

    /// Writes one value (nil removes), checks the rules it touches, and records the patch.
    private mutating func write(
        _ value: StoreValue?, at path: JSONPath, canonical: String, op: StorePatch.Op, _ context: inout ChangeContext
    ) throws(StoreError) -> ValidationResult {
        if path.components.isEmpty, let value, value.objectValue == nil {
            throw StoreError(.typeMismatch, keyPath: "$", "the root must be an object, not \(value.kindName)")
        }
        let mark = context.undo.count
        let old = try mutate(value, at: path, &context)
        if old == value {
            // Writing what is already there (or removing nothing) is not a change.
            context.touched.removeLast()
            return .ok
        }
        var extraPatches: [StorePatch] = []
        if !validator.isEmpty {
            let scope = Self.scope(of: path, removing: value == nil)
            for finding in validator.check(root, around: scope) {
                switch finding {
                case .rejected(let reason):
                    rollback(&context, to: mark)
                    return .failed(reason: reason)
                case .fixed(let fixPath, let fixed, let reason):
                    let before = try mutate(fixed, at: fixPath, &context)
                    context.warnings.append("\(reason); lenient validation wrote \(ValidationRule.excerpt(fixed)) instead")
                    if !path.isPrefix(of: fixPath) {
                        extraPatches.append(
                            StorePatch(op: .set, keyPath: fixPath.description, oldValue: before, newValue: fixed))
                    }
                }
            }
        }
        context.patches.append(
            StorePatch(op: op, keyPath: canonical, oldValue: old, newValue: root.value(at: path.components[...])))
        context.patches.append(contentsOf: extraPatches)
        return .ok
    }

    /// The one primitive that changes `root`: captures the subscribers it can affect, records how
    /// to undo it, and writes.
    private mutating func mutate(
        _ value: StoreValue?, at path: JSONPath, _ context: inout ChangeContext
    ) throws(StoreError) -> StoreValue? {
        let scope = Self.scope(of: path, removing: value == nil)
        capture(scope, &context)
        // Undo restores the highest step that did not exist (so created parents go too), or the
        // scope's old value.
        var undoPath = scope
        var existing = root
        for (depth, component) in scope.components.enumerated() {
            guard let next = existing.value(at: [component]) else {
                undoPath = JSONPath(components: Array(scope.components.prefix(depth + 1)))
                break
            }
            existing = next
        }
        let undoValue = root.value(at: undoPath.components[...])
        let old = try root.write(value, at: path)
        context.undo.append((undoPath, undoValue))
        context.touched.append(scope)
        return old
    }

    /// Removing an array element shifts the ones after it, so the whole array is what changed.
    private static func scope(of path: JSONPath, removing: Bool) -> JSONPath {
        if removing, case .index? = path.components.last { return path.parent }
        return path
    }

    private mutating func rollback(_ context: inout ChangeContext, to mark: Int) {
        while context.undo.count > mark {
            let (path, value) = context.undo.removeLast()
            _ = try? root.write(value, at: path)
        }
    }

    private mutating func capture(_ path: JSONPath, _ context: inout ChangeContext) {
        guard subscriptionIndex.count > 0 else { return }
        let root = self.root
        let subscriptions = self.subscriptions
        subscriptionIndex.forEachIntersecting(path) { id in
            guard context.captured.index(forKey: id) == nil, let subscription = subscriptions[id] else { return }
            context.captured[id] = .some(subscription.value(in: root))
        }
    }

    /// Runs the live expressions, then queues deliveries for what changed.
    private mutating func finish(
        _ context: inout ChangeContext, transactionID: UUID?, depth: Int, initiallyDirty: [Int]
    ) -> Outcome {
        if !expressions.isEmpty { runExpressions(&context, initiallyDirty: initiallyDirty) }
        var outcome = Outcome(warnings: context.warnings, problems: context.problems)
        guard !context.patches.isEmpty else { return outcome }
        outcome.changed = true
        generation &+= 1
        for id in context.captured.keys.sorted() {
            guard let subscription = subscriptions[id], let old = context.captured[id] else { continue }
            let new = subscription.value(in: root)
            if new != old {
                let deliver = subscription.deliver
                pending.append(Delivery(depth: depth) { deliver(new) })
            }
        }
        let change = StoreChange(scenarioID: scenarioID, patches: context.patches, transactionID: transactionID)
        #if DEBUG
        recentChanges.append(change)
        #endif
        for id in changeObservers.keys.sorted() {
            let observer = changeObservers[id]!
            pending.append(Delivery(depth: depth) { observer(change) })
        }
        if !pending.isEmpty && !delivering {
            delivering = true
            outcome.mustDrain = true
        }
        return outcome
    }

    // MARK: Live expressions

    /// Recomputes, in dependency order, each expression whose dependencies the change touched,
    /// at most once. An expression whose inputs change after it ran (a loop the registration
    /// check could not see, e.g. through a lenient fix of a parent value) is not run again: the
    /// change reports it as a ``StoreError/Code/dependencyCycle`` problem instead of looping.
    private mutating func runExpressions(_ context: inout ChangeContext, initiallyDirty: [Int]) {
        let nodes = expressions.ordered
        var dirty = [Bool](repeating: false, count: nodes.count)
        var ran = [Bool](repeating: false, count: nodes.count)
        for position in initiallyDirty { dirty[position] = true }
        var cursor = 0
        var seen = 0
        let dependents = expressions.dependents
        func markTouched(by writer: Int?, _ context: inout ChangeContext) {
            while seen < context.touched.count {
                dependents.forEachIntersecting(context.touched[seen]) { dependent in
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
                    cursor = Swift.min(cursor, dependent)
                }
                seen += 1
            }
        }
        markTouched(by: nil, &context)
        while cursor < nodes.count {
            let position = cursor
            cursor += 1
            guard dirty[position], !ran[position] else { continue }
            ran[position] = true
            let node = nodes[position]
            reentrancy.root = root
            let result = node.expression.compute { keyPath in
                guard let entry = try? self.paths.entry(keyPath) else { return nil }
                return self.root.resolve(entry.path)
            }
            reentrancy.root = nil
            let current = root.value(at: node.output.components[...])
            if node.expression.policy == .writeIfChanged && result == current { continue }
            let mark = context.undo.count
            let patchCount = context.patches.count
            let outcome: ValidationResult
            do throws(StoreError) {
                outcome = try write(
                    result, at: node.output, canonical: node.expression.outputKeyPath, op: result == nil ? .remove : .set,
                    &context)
            } catch {
                outcome = .failed(reason: error.description)
            }
            if case .failed(let reason) = outcome {
                rollback(&context, to: mark)
                context.patches.removeSubrange(patchCount...)
                context.touched.removeSubrange(Swift.min(seen, context.touched.count)...)
                context.warnings.append("live expression \(node.expression.id) not written: \(reason)")
                continue
            }
            if result == current, context.patches.count == patchCount {
                // alwaysWrite of an unchanged value (or a removal of nothing): record it anyway.
                context.patches.append(
                    StorePatch(op: .set, keyPath: node.output.description, oldValue: current, newValue: current))
            }
            markTouched(by: position, &context)
        }
    }

    // MARK: Subscriptions

    /// Adds a subscriber: `makeDeliver` gets the current value and returns what to call with
    /// later ones; both happen under the lock, so no change can slip between them.
    mutating func subscribe(
        _ entries: [KeyPathCache.Entry], keyPaths: [String], combined: Bool, kind: String,
        makeDeliver: (StoreValue?) -> @Sendable (StoreValue?) -> Void
    ) -> Int {
        nextID += 1
        let paths = entries.map(\.path)
        let probe = Subscription(id: nextID, paths: paths, keyPaths: keyPaths, combined: combined, kind: kind) { _ in }
        let deliver = makeDeliver(probe.value(in: root))
        subscriptions[nextID] = Subscription(
            id: nextID, paths: paths, keyPaths: keyPaths, combined: combined, kind: kind, deliver: deliver)
        for path in paths { subscriptionIndex.insert(path, id: nextID) }
        return nextID
    }

    mutating func unsubscribe(_ id: Int) {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        for path in subscription.paths { subscriptionIndex.remove(path, id: id) }
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
        defer { pending.removeAll(keepingCapacity: true) }
        return pending
    }

    // MARK: Configuration

    /// Installs validation rules, then fills in the defaults of missing required values (and, in
    /// lenient mode, fixes what breaks the rules) as one change.
    mutating func configureValidation(_ options: ValidationOptions, depth: Int) -> Outcome {
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
                if let old = try? mutate(value, at: path, &context) {
                    context.patches.append(StorePatch(op: .set, keyPath: path.description, oldValue: old, newValue: value))
                    context.warnings.append("\(reason); lenient validation wrote \(ValidationRule.excerpt(value)) instead")
                }
            }
        }
        return finish(&context, transactionID: nil, depth: depth, initiallyDirty: [])
    }

    /// Registers a live expression and computes it once.
    mutating func register(_ expression: LiveExpression, depth: Int) throws(StoreError) -> Outcome {
        expressions = try expressions.adding(expression)
        let position = expressions.ordered.firstIndex { $0.expression.id == expression.id }!
        var context = ChangeContext()
        return finish(&context, transactionID: nil, depth: depth, initiallyDirty: [position])
    }

    mutating func unregisterExpression(id: String) {
        expressions = expressions.removing(id: id)
    }

    /// Replaces every value without validation (scenario end, version drop, loading from disk),
    /// then fills required defaults, as one change.
    mutating func reset(to members: [String: StoreValue], depth: Int) -> Outcome {
        var context = ChangeContext()
        let old = root
        _ = try? mutate(.object(members), at: .root, &context)
        if old != root {
            context.patches.append(StorePatch(op: .set, keyPath: "$", oldValue: old, newValue: root))
        }
        for (path, value) in validator.missingDefaults(in: root) {
            _ = try? write(value, at: path, canonical: path.description, op: .set, &context)
        }
        return finish(&context, transactionID: nil, depth: depth, initiallyDirty: Array(expressions.ordered.indices))
    }
}
