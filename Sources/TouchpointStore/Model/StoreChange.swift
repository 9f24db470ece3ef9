import Foundation

/// Everything one call changed: a single write, or a whole transaction, with the live
/// expressions it triggered, as one unit.
public struct StoreChange: Sendable, Hashable {
    /// The scope's scenario id (`scenarioSession(id:)`, `backend(…, scenarioID:)`), or `""` for
    /// scopes without one.
    public let scenarioID: String
    /// The writes in the order they were applied; live-expression outputs come after the writes
    /// that triggered them.
    public let patches: [StorePatch]
    /// The transaction that made the change, nil for a single write.
    public let transactionID: UUID?

    /// Creates a change.
    /// - Parameters:
    ///   - scenarioID: the scope's scenario id, or `""`.
    ///   - patches: the writes, in order.
    ///   - transactionID: the transaction, if any.
    public init(scenarioID: String, patches: [StorePatch], transactionID: UUID?) {
        self.scenarioID = scenarioID
        self.patches = patches
        self.transactionID = transactionID
    }
}
