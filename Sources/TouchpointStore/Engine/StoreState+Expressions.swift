import Foundation
import TouchpointCore

/// ``StoreState``: the live-expression scheduler.
extension StoreState {
    /// Which expressions a change still has to run, and which ran.
    struct ExpressionRun {
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
    mutating func runExpressions(_ context: inout ChangeContext, initiallyDirty: [Int]) {
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
    mutating func writeOutput(
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
    mutating func markSuccessors(of position: Int, _ run: inout ExpressionRun, _ context: inout ChangeContext) {
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
    mutating func isObserved(_ position: Int, _ node: ExpressionGraph.Node) -> Bool {
        let index = subscriptionIndex
        return slots.isObserved(position, version: index.version) {
            var observed = false
            index.forEachNode(intersecting: node.output) { _ in observed = true }
            return observed
        }
    }
}
