#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// Scenario data addressed by key paths: read, write, observe, validate and derive.
///
/// Key paths use dot and bracket syntax (`cart.total`, `items[0].title`, `labels["pt-BR"]`);
/// reads and subscriptions also take patterns (`items[*].price`). Writes are serial and every
/// method is safe to call from any thread.
///
/// The mutation methods return a ``ValidationResult`` that callers may ignore: `.failed` means
/// nothing changed (an invalid key path, a type mismatch along the path, or a rule that rejected
/// the value).
public protocol KeyValueStore: AnyObject, Sendable {
    /// Where the values live.
    var scope: Scope { get }
    /// The scope's scenario, if it has one.
    var scenarioID: String? { get }

    // MARK: IO

    /// The value at a key path, nil when absent. A pattern gives an array of its matches (nil when none).
    func get(_ keyPath: String) -> StoreValue?
    /// The value at a key path decoded as `T` (colors and URLs read as strings, so `URL` works).
    /// - Throws: ``StoreError`` (``StoreError/Code/notFound``, ``StoreError/Code/typeMismatch``,
    ///   ``StoreError/Code/invalidKeyPath``).
    func get<T: Decodable>(_ keyPath: String, as: T.Type) throws -> T
    /// Whether a value (null included) is at a key path.
    func exists(_ keyPath: String) -> Bool

    // MARK: Mutations

    /// Writes a value, creating missing parent objects (and an array for index 0); an array index
    /// may be one past the end to append.
    @discardableResult func set(_ keyPath: String, _ value: StoreValue) -> ValidationResult
    /// Merges an object into the one at a key path, as an RFC 7396 merge patch: `.null` members
    /// remove keys, object members merge recursively, other members replace; a missing or
    /// non-object target becomes an object.
    @discardableResult func merge(_ keyPath: String, _ object: [String: StoreValue]) -> ValidationResult
    /// Removes the value at a key path (array elements after it move up). Removing nothing is fine.
    @discardableResult func remove(_ keyPath: String) -> ValidationResult

    // MARK: Batch

    /// Runs `block` against a transaction: its reads see its own writes; its writes become one
    /// ``StoreChange`` when it returns, or none at all when one of them fails.
    @discardableResult func transaction(_ block: (any KeyValueStore) -> Void) -> ValidationResult

    // MARK: Observation

    /// The value at a key path (or pattern) now, then each time it changes.
    func publisher(for keyPath: String) -> AnyPublisher<StoreValue?, Never>
    /// An object of the values at several key paths (keyed by the key paths as given, `.null` for
    /// absent ones) now, then each time any of them changes.
    func publisher(for keyPaths: Set<String>) -> AnyPublisher<StoreValue, Never>

    // MARK: Snapshot

    /// Every value, by top-level key.
    func snapshot() -> [String: StoreValue]
    /// Replaces every value (validated like any write).
    @discardableResult func replaceAll(with root: [String: StoreValue]) -> ValidationResult

    // MARK: Validation

    /// Installs validation rules; missing required values with defaults are filled in.
    func configureValidation(_ options: ValidationOptions)
    /// What ``set(_:_:)`` would answer for this value, without writing it.
    func validateWrite(_ keyPath: String, _ value: StoreValue) -> ValidationResult

    // MARK: Expressions

    /// Registers (or replaces, by id) a live expression and computes it once. Fails without
    /// registering when a key path is invalid, the output overlaps another expression's, or the
    /// expressions would form a cycle (the reason names it: `a → b → a`).
    @discardableResult func registerLiveExpression(_ expr: LiveExpression) -> ValidationResult
    /// Stops recomputing an expression; its last output stays.
    func unregisterLiveExpression(id: String)
}
