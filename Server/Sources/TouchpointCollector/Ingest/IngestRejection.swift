/// One event of a batch that was not stored, and why: `batch[17].messageId: missing`.
public struct IngestRejection: Sendable, Hashable, CustomStringConvertible {
    /// The event's position in the request's `batch` array (0 for single-message endpoints).
    public var index: Int
    /// Where the problem is, e.g. `batch[17].messageId`.
    public var path: String
    /// What is wrong, e.g. `missing`.
    public var reason: String

    /// Creates a rejection.
    public init(index: Int, path: String, reason: String) {
        self.index = index
        self.path = path
        self.reason = reason
    }

    /// `path: reason`.
    public var description: String { "\(path): \(reason)" }
}
