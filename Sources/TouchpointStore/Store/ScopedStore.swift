import Foundation
import Logging
import TouchpointCore

/// The store of one scope of a ``DefaultStore``: the ``KeyValueStore`` the app works with.
///
/// Writes are serial: one change at a time, each a single state transition under a small lock
/// (the seed's "serial queue", without a thread hop). Reads take the same lock briefly and are
/// safe from any thread. Subscribers are called after the lock is released, in change order; a
/// subscriber may read and write the store from its callback (its write is applied at once and
/// its notifications follow the current ones).
///
/// Get one from ``DefaultStore/named(_:)`` (as `any KeyValueStore`) or ``DefaultStore/scoped(_:)``.
public final class ScopedStore: KeyValueStore {
    /// Where the values live.
    public let scope: Scope
    let context: StoreContext
    let guarded: GuardedState
    /// Serialises writers; held for a whole transaction so its block sees no other writer.
    private let writerLock = Locked(())
    /// Writers waiting for `writerLock` now: counted only when it is taken, so an uncontended
    /// write pays nothing for it.
    private let waitingWriterCount = Locked(0)
    let persistence: (any PersistenceSink)?
    let flushState = Locked(FlushState())

    struct FlushState {
        var persistedGeneration: UInt64 = 0
        var statistics = PersistenceStatistics()
        var retryDelay: TimeInterval = 0
    }

    init(scope: Scope, context: StoreContext, persistence: (any PersistenceSink)?) {
        self.scope = scope
        self.context = context
        self.persistence = persistence
        let scenarioID = scope.scenarioID ?? ""
        let limit = context.configuration.recentChangeLimit
        self.guarded = GuardedState { reentrancy in
            StoreState(scenarioID: scenarioID, recentChangeLimit: limit, reentrancy: reentrancy)
        }
        if persistence != nil { load() }
    }

    deinit {
        if persistence != nil { flush() }
    }

    /// The scope's scenario, if it has one.
    public var scenarioID: String? { scope.scenarioID }

    static let reentrantWriteMessage =
        "a live expression's compute cannot write to the store; return the value instead"

    // MARK: IO

    /// The value at a key path, nil when absent (or when the key path does not parse, which is logged).
    public func get(_ keyPath: String) -> StoreValue? {
        if let transaction = activeTransaction { return transaction.get(keyPath) }
        do {
            return try guarded.value(at: keyPath)
        } catch {
            context.logger.warning("get: \(error)")
            return nil
        }
    }

    /// The value at a key path decoded as `T`.
    /// - Throws: ``StoreError``: ``StoreError/Code/notFound`` when absent,
    ///   ``StoreError/Code/typeMismatch`` when it does not decode, ``StoreError/Code/invalidKeyPath``.
    public func get<T: Decodable>(_ keyPath: String, as type: T.Type) throws -> T {
        if let transaction = activeTransaction { return try transaction.get(keyPath, as: type) }
        guard let value = try guarded.value(at: keyPath) else {
            throw StoreError(.notFound, keyPath: keyPath, "no value")
        }
        return try value.decode(as: type, keyPath: keyPath)
    }

    /// Whether a value (null included) is at a key path.
    public func exists(_ keyPath: String) -> Bool { get(keyPath) != nil }

    /// Every value, by top-level key.
    public func snapshot() -> [String: StoreValue] {
        if let transaction = activeTransaction { return transaction.snapshot() }
        return guarded.snapshot()
    }

    // MARK: Mutations

    /// Writes a value; see ``KeyValueStore/set(_:_:)``.
    @discardableResult public func set(_ keyPath: String, _ value: StoreValue) -> ValidationResult {
        perform(.set(keyPath, value))
    }

    /// Merges an object (RFC 7396); see ``KeyValueStore/merge(_:_:)``.
    @discardableResult public func merge(_ keyPath: String, _ object: [String: StoreValue]) -> ValidationResult {
        perform(.merge(keyPath, object))
    }

    /// Removes a value; see ``KeyValueStore/remove(_:)``.
    @discardableResult public func remove(_ keyPath: String) -> ValidationResult {
        perform(.remove(keyPath))
    }

    /// Replaces every value, validated like any write.
    @discardableResult public func replaceAll(with root: [String: StoreValue]) -> ValidationResult {
        perform(.replaceAll(root))
    }

    private func perform(_ operation: StoreOperation) -> ValidationResult {
        if let transaction = activeTransaction { return transaction.perform(operation) }
        guard !isInsideComputation else { return rejected(.reentrantWrite) }
        guard let depth = admitWrite() else { return rejected(.feedbackLoop) }
        let outcome = withWriterLock {
            guarded.mutate { state in state.apply(operation, depth: depth) }
        }
        guard let outcome else { return rejected(.reentrantWrite) }
        return finish(outcome)
    }

    // MARK: Batch

    /// Runs `block` as one transaction: its writes become one ``StoreChange``, or none when one
    /// fails in strict mode (in lenient mode a write that cannot be fixed is skipped and logged).
    ///
    /// No other writer runs while the block runs, so what it reads stays true until it commits.
    /// Live expressions run once, at commit. Validation and expression changes made inside take
    /// effect on the store at commit, after the writes. A nested transaction joins the outer one.
    @discardableResult public func transaction(_ block: (any KeyValueStore) -> Void) -> ValidationResult {
        if let transaction = activeTransaction { return transaction.transaction(block) }
        guard !isInsideComputation else { return rejected(.reentrantWrite) }
        guard let depth = admitWrite() else { return rejected(.feedbackLoop) }
        let transactionID = UUID()
        let (outcome, deferred): (StoreState.Outcome, [@Sendable (ScopedStore) -> Void]) = withWriterLock {
            let proxy = TransactionStore(parent: self) { reentrancy in
                guarded.read { $0.detached(reentrancy: reentrancy) }!
            }
            guarded.reentrancy.transaction = proxy
            guarded.reentrancy.markInTransaction(true)
            block(proxy)
            guarded.reentrancy.markInTransaction(false)
            guarded.reentrancy.transaction = nil
            let record = proxy.recorded
            for reason in record.skipped { context.logger.warning("transaction: write skipped: \(reason)") }
            if let failure = record.failure {
                return (StoreState.Outcome(result: .failed(reason: "transaction rolled back: \(failure)")), [])
            }
            let outcome = guarded.mutate { state in
                state.apply(record.operations, transactionID: transactionID, depth: depth)
            }
            return (outcome ?? StoreState.Outcome(result: .failed(reason: Self.reentrantWriteMessage)), record.deferred)
        }
        let result = finish(outcome)
        for action in deferred { action(self) }
        return result
    }

    /// Runs `body` holding the writer lock, counted in ``waitingWriters`` while it waits for it.
    private func withWriterLock<Value>(_ body: () -> Value) -> Value {
        if let result = writerLock.withLockIfAvailable({ _ in body() }) { return result }
        waitingWriterCount.withLock { $0 += 1 }
        return writerLock.withLock { _ in
            waitingWriterCount.withLock { $0 -= 1 }
            return body()
        }
    }

    /// How many writers (on other threads) are waiting for the one writing now, such as a
    /// transaction whose block is running.
    var waitingWriters: Int { waitingWriterCount.value }

    /// Whether the current thread is inside this store's lock (running a live expression's
    /// compute), where taking the writer lock again would deadlock.
    private var isInsideComputation: Bool { guarded.reentrancy.isHeldByCurrentThread }

    /// The transaction the current thread is running on this store, if any.
    private var activeTransaction: TransactionStore? {
        guarded.reentrancy.isInTransactionOnCurrentThread ? guarded.reentrancy.transaction : nil
    }

    // MARK: Validation

    /// Installs validation rules; see ``KeyValueStore/configureValidation(_:)``.
    public func configureValidation(_ options: ValidationOptions) {
        if let transaction = activeTransaction { return transaction.configureValidation(options) }
        guard !isInsideComputation else {
            _ = rejected(.reentrantWrite)
            return
        }
        let depth = ReentrancyContext.deliveryDepth + 1
        let outcome = withWriterLock { guarded.mutate { $0.configureValidation(options, depth: depth) } }
        guard let outcome else {
            _ = rejected(.reentrantWrite)
            return
        }
        _ = finish(outcome)
    }

    /// What ``set(_:_:)`` would answer, without writing.
    public func validateWrite(_ keyPath: String, _ value: StoreValue) -> ValidationResult {
        if let transaction = activeTransaction { return transaction.validateWrite(keyPath, value) }
        return guarded.read { $0.dryRun([.set(keyPath, value)]) } ?? .failed(reason: Self.reentrantWriteMessage)
    }

    // MARK: Expressions

    /// Registers a live expression and computes it once; see ``KeyValueStore/registerLiveExpression(_:)``.
    @discardableResult public func registerLiveExpression(_ expr: LiveExpression) -> ValidationResult {
        if let transaction = activeTransaction { return transaction.registerLiveExpression(expr) }
        guard !isInsideComputation else { return rejected(.reentrantWrite) }
        let depth = ReentrancyContext.deliveryDepth + 1
        let registered: Result<StoreState.Outcome, StoreError>? = withWriterLock {
            guarded.mutate { state in
                do throws(StoreError) {
                    return .success(try state.register(expr, depth: depth))
                } catch {
                    return .failure(error)
                }
            }
        }
        switch registered {
        case nil:
            return rejected(.reentrantWrite)
        case .failure(let error)?:
            context.logger.error("live expression \(expr.id) not registered: \(error)")
            return .failed(reason: error.description)
        case .success(let outcome)?:
            return finish(outcome)
        }
    }

    /// Stops recomputing an expression; its last output stays.
    public func unregisterLiveExpression(id: String) {
        if let transaction = activeTransaction { return transaction.unregisterLiveExpression(id: id) }
        guard !isInsideComputation else {
            _ = rejected(.reentrantWrite)
            return
        }
        _ = withWriterLock { guarded.mutate { $0.unregisterExpression(id: id) } }
    }

    // MARK: Lifecycle

    /// Replaces every value without validation (then fills required defaults) as one change.
    func reset(to members: [String: StoreValue]) {
        if let transaction = activeTransaction {
            // Inside a transaction on this thread the writer lock is held: the reset joins it.
            _ = transaction.perform(.replaceAll(members))
            return
        }
        guard !isInsideComputation else {
            _ = rejected(.reentrantWrite)
            return
        }
        let depth = ReentrancyContext.deliveryDepth + 1
        let outcome = withWriterLock {
            guarded.mutate { state -> StoreState.Outcome in
                if persistence != nil { state.markDirty() }
                return state.reset(to: members, depth: depth)
            }
        }
        if let outcome { _ = finish(outcome) }
    }

    // MARK: Finishing a change

    /// The cascade depth of a new write from this thread, or nil when it is past the limit.
    private func admitWrite() -> Int? {
        let depth = ReentrancyContext.deliveryDepth + 1
        return depth > context.configuration.maximumCascadeDepth ? nil : depth
    }

    private func rejected(_ code: StoreError.Code) -> ValidationResult {
        let message =
            code == .feedbackLoop
            ? "subscribers and the store kept triggering each other past \(context.configuration.maximumCascadeDepth) levels; write refused"
            : Self.reentrantWriteMessage
        let error = StoreError(code, message)
        context.logger.error("\(scope): \(error)")
        return .failed(reason: error.description)
    }

    /// Logs, schedules persistence and delivers, after the lock is released.
    private func finish(_ outcome: StoreState.Outcome) -> ValidationResult {
        for warning in outcome.warnings { context.logger.warning("\(scope): \(warning)") }
        for problem in outcome.problems { context.report(problem, level: .warning) }
        if case .failed(let reason) = outcome.result { context.logger.notice("\(scope): write rejected: \(reason)") }
        if outcome.changed && persistence != nil { scheduleWrite() }
        if outcome.mustDrain { drain(outcome.deliveries) }
        return outcome.result
    }

    /// Hands queued values to subscribers until none are left. Only one thread drains at a time
    /// (the state says which), so deliveries keep change order.
    private func drain(_ first: [Delivery]) {
        let outer = ReentrancyContext.deliveryDepth
        defer { ReentrancyContext.deliveryDepth = outer }
        var batch = first
        while !batch.isEmpty {
            for delivery in batch {
                ReentrancyContext.deliveryDepth = delivery.depth
                delivery.run()
            }
            batch = guarded.read { $0.takeDeliveries() } ?? []
        }
    }
}
