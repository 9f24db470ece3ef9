/// One write as it happened: the operation, where, and the value before and after.
///
/// `keyPath` is canonical (as ``TouchpointCore/JSONPath`` describes it: `items[0].title`,
/// `labels["pt-BR"]`). `oldValue`/`newValue` are nil when nothing was there before/after.
public struct StorePatch: Sendable, Hashable {
    /// The kind of write.
    public enum Op: String, Sendable, Hashable, Codable {
        /// A value written (also used for a live expression's output and a lenient fix).
        case set
        /// A value removed.
        case remove
        /// An object merged in (RFC 7396 merge patch).
        case merge
    }

    /// The kind of write.
    public let op: Op
    /// Where, canonically written.
    public let keyPath: String
    /// The value before the write, nil when there was none.
    public let oldValue: StoreValue?
    /// The value after the write, nil when there is none.
    public let newValue: StoreValue?

    /// Creates a patch.
    /// - Parameters:
    ///   - op: the kind of write.
    ///   - keyPath: where.
    ///   - oldValue: the value before, if any.
    ///   - newValue: the value after, if any.
    public init(op: Op, keyPath: String, oldValue: StoreValue?, newValue: StoreValue?) {
        self.op = op
        self.keyPath = keyPath
        self.oldValue = oldValue
        self.newValue = newValue
    }
}
