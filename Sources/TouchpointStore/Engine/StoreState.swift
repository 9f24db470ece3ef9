import Foundation
import TouchpointCore

/// Everything one scoped store holds, and the one place its values change: a plain state
/// machine, guarded from outside by the store's lock.
///
/// It lives in one file per job: this one (the state and how a change's context is made),
/// `+Reading` (values and snapshots), `+Changing` (the write/undo primitive, validation,
/// recording a change), `+Expressions` (the live-expression scheduler), `+Subscriptions`
/// (observers and the deliveries they wait for) and `+Configuration` (validation options,
/// expression registration, reset). Its members are internal so these files can share them;
/// nothing outside them touches the state but through the store's lock (`GuardedState`).
///
/// **Invariants**, which every method keeps and the tests check through the public API:
/// - `root` is always an object; an expression's output may be newer in `slots` than in `root`
///   until `materialize()` copies it back (every read of `root` as a whole materializes first).
/// - `expressions.ordered` is in dependency order, and `slots` has one slot per expression.
/// - A change's `undo` log holds, newest last, the value each written path had before it; rolling
///   back replays it in reverse, so a refused change leaves `root` as it was.
/// - `subscriptionIndex` holds exactly the observers in `subscriptions`.
/// - `pending` deliveries are made outside the lock, in change order, by one caller at a time
///   (`delivering`).
/// - `generation` grows with every change that persistence must write.
/// A step that breaks an invariant (a rollback that cannot write back, a reset that cannot
/// replace the root) stops a debug build at once and, in a release build, is counted in
/// ``internalFailures`` (``ScopedStore/internalFailureCount``) instead of passing in silence.
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
    var root: StoreValue = .object([:])
    var paths = KeyPathCache()
    let scenarioID: String

    // Observation
    var subscriptions: [Int: Observer] = [:]
    var subscriptionIndex = PathTrie<Observer>()
    var changeObservers: [Int: @Sendable (StoreChange) -> Void] = [:]
    var nextID = 0

    // Rules
    var validator = Validator(ValidationOptions())
    var expressions = ExpressionGraph()
    /// The expressions' outputs, by position in ``expressions``.
    var slots = OutputSlots()
    /// The position of the expression computing now (whose declared inputs `get` matches).
    var runningExpression = 0

    // Deliveries waiting to be made outside the lock, in change order.
    var pending: [Delivery] = []
    var delivering = false

    /// Steps that could not happen although the invariants say they always can (see above).
    var internalFailures = 0

    /// Counts changes; persistence writes when it moved past what was saved.
    var generation: UInt64 = 0
    /// Whether a persistent scope has a write scheduled.
    var writeScheduled = false

    /// The storage of the last change's context, reused by the next.
    var spareContext = ChangeContext()

    /// Lets reads from inside a live expression (on the thread that holds the lock) see the state.
    let reentrancy: ReentrancyContext

    #if DEBUG
    var recentChanges: RecentChanges
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
    mutating func makeContext(operations: Int) -> ChangeContext {
        var context = ChangeContext()
        swap(&context, &spareContext)
        #if !DEBUG
        context.recordsPatches = !changeObservers.isEmpty
        #endif
        context.recordsUndo = operations > 1 || !validator.isEmpty
        return context
    }

    /// Keeps a finished context's storage for the next change.
    mutating func recycle(_ context: inout ChangeContext) {
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

    /// Records a step that broke an invariant: stops a debug build, counts it in a release build.
    mutating func noteInternalFailure(_ step: String, _ error: any Error) {
        internalFailures += 1
        assertionFailure("StoreState: \(step) failed: \(error)")
    }

    /// Counts a change that happened outside the state machine (data dropped on open), so the
    /// next flush writes.
    mutating func markDirty() { generation &+= 1 }
}
