import Foundation
import TouchpointCore

/// ``StoreState``: reading the values.
extension StoreState {
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
    mutating func materialize() {
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
    mutating func prepareWrite(at scope: JSONPath, _ entry: KeyPathCache.Entry?) {
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
}
