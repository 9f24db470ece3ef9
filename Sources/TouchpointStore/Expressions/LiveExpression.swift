/// A value computed from other values of the store, kept up to date as they change.
///
/// The store recomputes the expression, synchronously and inside the same change, whenever a
/// value at one of its ``dependsOn`` key paths changes (patterns such as `items[*].price`
/// included), and writes the result to ``outputKeyPath`` through the usual validated write.
/// Expressions that feed each other run in dependency order, each at most once per change, so
/// every expression and every subscriber sees a consistent state. A `nil` result removes the output.
///
/// ```swift
/// store.registerLiveExpression(.init(
///     id: "sum-total",
///     outputKeyPath: "cart.total",
///     dependsOn: ["items[*].price"],
///     compute: { get in
///         let prices = get("items[*].price")?.arrayValue ?? []
///         return .number(prices.compactMap(\.doubleValue).reduce(0, +))
///     }
/// ))
/// ```
///
/// `compute` must read through the `get` it is given (reads through the store itself also work)
/// and must not write to the store: it returns its value instead.
public struct LiveExpression: Sendable, Equatable {
    /// A name unique among the store's expressions, used to unregister it and in cycle reports.
    public let id: String
    /// Where the result is written; a concrete key path (no wildcards).
    public let outputKeyPath: String
    /// The key paths (or patterns) whose changes trigger a recomputation.
    public let dependsOn: Set<String>
    /// Computes the output from the store's current values, read through `get`.
    public let compute: @Sendable (_ get: (String) -> StoreValue?) -> StoreValue?
    /// When the result is written back.
    public let policy: LiveExpressionPolicy

    /// Creates an expression.
    /// - Parameters:
    ///   - id: a name unique among the store's expressions.
    ///   - outputKeyPath: where the result is written (no wildcards).
    ///   - dependsOn: the key paths or patterns whose changes trigger a recomputation.
    ///   - compute: computes the result from values read through `get`; nil removes the output.
    ///   - policy: when to write the result back (default: only when it changed).
    public init(
        id: String, outputKeyPath: String, dependsOn: Set<String>,
        compute: @escaping @Sendable (_ get: (String) -> StoreValue?) -> StoreValue?,
        policy: LiveExpressionPolicy = .writeIfChanged
    ) {
        self.id = id
        self.outputKeyPath = outputKeyPath
        self.dependsOn = dependsOn
        self.compute = compute
        self.policy = policy
    }

    /// Two expressions are equal when they have the same id, paths and policy (closures cannot be compared).
    public static func == (lhs: LiveExpression, rhs: LiveExpression) -> Bool {
        lhs.id == rhs.id && lhs.outputKeyPath == rhs.outputKeyPath && lhs.dependsOn == rhs.dependsOn
            && lhs.policy == rhs.policy
    }
}
