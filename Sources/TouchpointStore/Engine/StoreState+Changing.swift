import Foundation
import TouchpointCore

/// ``StoreState``: the change primitive: write, validate, roll back, record.
extension StoreState {
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

    mutating func apply(_ operation: StoreOperation, _ context: inout ChangeContext) -> ValidationResult {
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
    mutating func write(
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
    mutating func mutate(
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
    static func scope(of path: JSONPath, removing: Bool) -> JSONPath {
        if removing, case .index? = path.components.last { return path.parent }
        return path
    }

    mutating func rollback(_ context: inout ChangeContext, to mark: Int) {
        guard context.undo.count > mark else { return }
        while context.undo.count > mark {
            let (path, value) = context.undo.removeLast()
            prepareWrite(at: path, nil)
            do {
                _ = try root.write(value, at: path)
            } catch {
                noteInternalFailure("rolling back \(path)", error)
            }
        }
        context.forgetNewValues()
    }

    /// Captures what the subscribers a write at `path` can affect saw before it. Returns the
    /// position in `context.capturedNodes` of the node exactly at `path` (when `exactly`), whose
    /// old and new values the write itself supplies, so they need no lookup.
    mutating func capture(
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
    mutating func finish(
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
}
