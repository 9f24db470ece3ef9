import Foundation
import TouchpointCore

/// ``StoreState``: validation options, expression registration and reset.
extension StoreState {
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
        // The graph that was just built holds the expression; all of them run if it somehow does not.
        let dirty =
            expressions.ordered.firstIndex { $0.expression.id == expression.id }.map { [$0] }
            ?? Array(expressions.ordered.indices)
        var context = ChangeContext()
        return finish(&context, transactionID: nil, depth: depth, initiallyDirty: dirty)
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
        do {
            _ = try mutate(.object(members), at: .root, nil, &context)
        } catch {
            noteInternalFailure("replacing every value", error)
        }
        if old != root {
            context.record(StorePatch(op: .set, keyPath: "$", oldValue: old, newValue: root))
        }
        for (path, value) in validator.missingDefaults(in: root) {
            do {
                _ = try write(value, at: path, canonical: path.description, op: .set, &context)
            } catch {
                noteInternalFailure("filling the default at \(path)", error)
            }
        }
        return finish(&context, transactionID: nil, depth: depth, initiallyDirty: Array(expressions.ordered.indices))
    }
}
