/// When a live expression's result is written back to its output key path.
public enum LiveExpressionPolicy: Sendable, Hashable {
    /// Only when the result differs from the value already there (no patch otherwise).
    case writeIfChanged
    /// After every recomputation, adding a patch to the change even when the value is the same;
    /// subscribers are still told only about values that changed.
    case alwaysWrite
}
