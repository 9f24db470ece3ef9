import TouchpointCore

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// The store a transaction's block works on: a private copy of the values that records the
/// writes which succeeded, to be replayed on the real store as one change.
///
/// Writes made inside the block through the real store (on the same thread) come here too.
/// Validation and expression changes apply to the copy at once and to the real store when the
/// transaction commits, after its writes.
final class TransactionStore: KeyValueStore {
    private let parent: ScopedStore
    private let guarded: GuardedState
    private let mode: ValidationOptions.Mode
    private let record = Locked(Record())

    struct Record {
        var operations: [StoreOperation] = []
        var failure: String?
        var skipped: [String] = []
        var deferred: [@Sendable (ScopedStore) -> Void] = []
    }

    /// - Parameters:
    ///   - parent: the real store.
    ///   - makeState: the copy to work on, built around the copy's own re-entrancy context.
    init(parent: ScopedStore, makeState: (ReentrancyContext) -> StoreState) {
        self.parent = parent
        let guarded = GuardedState(makeState)
        self.guarded = guarded
        self.mode = guarded.read { $0.validator.mode } ?? .strict
    }

    var recorded: Record { record.value }

    var scope: Scope { parent.scope }
    var scenarioID: String? { parent.scenarioID }

    func get(_ keyPath: String) -> StoreValue? { (try? guarded.value(at: keyPath)) ?? nil }

    func get<T: Decodable>(_ keyPath: String, as type: T.Type) throws -> T {
        guard let value = try guarded.value(at: keyPath) else {
            throw StoreError(.notFound, keyPath: keyPath, "no value")
        }
        return try value.decode(as: type, keyPath: keyPath)
    }

    func exists(_ keyPath: String) -> Bool { get(keyPath) != nil }

    @discardableResult func set(_ keyPath: String, _ value: StoreValue) -> ValidationResult {
        perform(.set(keyPath, value))
    }

    @discardableResult func merge(_ keyPath: String, _ object: [String: StoreValue]) -> ValidationResult {
        perform(.merge(keyPath, object))
    }

    @discardableResult func remove(_ keyPath: String) -> ValidationResult { perform(.remove(keyPath)) }

    @discardableResult func replaceAll(with root: [String: StoreValue]) -> ValidationResult {
        perform(.replaceAll(root))
    }

    /// Applies a write to the copy and records it; a rejected write fails the whole transaction
    /// in strict mode and is skipped (and logged) in lenient mode.
    func perform(_ operation: StoreOperation) -> ValidationResult {
        let outcome = guarded.mutate { $0.apply(operation, depth: 0) }
        guard let outcome else {
            return .failed(reason: StoreError(.reentrantWrite, ScopedStore.reentrantWriteMessage).description)
        }
        record.withLock { record in
            switch outcome.result {
            case .ok:
                record.operations.append(operation)
            case .failed(let reason):
                if mode == .strict {
                    if record.failure == nil { record.failure = reason }
                } else {
                    record.skipped.append(reason)
                }
            }
        }
        return outcome.result
    }

    @discardableResult func transaction(_ block: (any KeyValueStore) -> Void) -> ValidationResult {
        block(self)
        return record.withLock { $0.failure.map { .failed(reason: $0) } ?? .ok }
    }

    func publisher(for keyPath: String) -> AnyPublisher<StoreValue?, Never> { parent.publisher(for: keyPath) }

    func publisher(for keyPaths: Set<String>) -> AnyPublisher<StoreValue, Never> { parent.publisher(for: keyPaths) }

    func snapshot() -> [String: StoreValue] { guarded.snapshot() }

    func configureValidation(_ options: ValidationOptions) {
        _ = guarded.mutate { $0.configureValidation(options, depth: 0) }
        record.withLock { $0.deferred.append { $0.configureValidation(options) } }
    }

    func validateWrite(_ keyPath: String, _ value: StoreValue) -> ValidationResult {
        guarded.read { $0.dryRun([.set(keyPath, value)]) } ?? .ok
    }

    @discardableResult func registerLiveExpression(_ expr: LiveExpression) -> ValidationResult {
        let result: ValidationResult? = guarded.mutate { state in
            do throws(StoreError) {
                _ = try state.register(expr, depth: 0)
                return .ok
            } catch {
                return .failed(reason: error.description)
            }
        }
        if result == .ok { record.withLock { $0.deferred.append { $0.registerLiveExpression(expr) } } }
        return result ?? .failed(reason: ScopedStore.reentrantWriteMessage)
    }

    func unregisterLiveExpression(id: String) {
        _ = guarded.mutate { $0.unregisterExpression(id: id) }
        record.withLock { $0.deferred.append { $0.unregisterLiveExpression(id: id) } }
    }
}
