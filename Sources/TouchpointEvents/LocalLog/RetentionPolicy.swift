import Foundation

/// How much history the local log keeps: sessions older than ``maximumAge`` and, past
/// ``maximumTotalBytes``, the oldest sessions are deleted. The open session is never deleted,
/// and neither is a session a consumer still needs (see ``EventConsumer``).
public struct RetentionPolicy: Sendable, Hashable {
    /// Sessions that started longer ago than this are deleted; nil keeps them regardless of age.
    public var maximumAge: TimeInterval?
    /// When the sessions take more bytes than this, the oldest are deleted until they fit;
    /// nil sets no limit.
    public var maximumTotalBytes: Int64?

    public init(maximumAge: TimeInterval? = nil, maximumTotalBytes: Int64? = nil) {
        self.maximumAge = maximumAge
        self.maximumTotalBytes = maximumTotalBytes
    }

    /// Keeps everything.
    public static let keepEverything = RetentionPolicy()

    /// The default: 30 days and 50 MB.
    public static let standard = RetentionPolicy(maximumAge: 30 * 86_400, maximumTotalBytes: 50 * 1024 * 1024)
}

/// What a retention pass did.
public struct RetentionReport: Sendable, Hashable {
    /// The sessions deleted, oldest first.
    public var deletedSessions: [UUID] = []
    /// The bytes they took.
    public var deletedBytes: Int64 = 0
    /// Sessions that were due for deletion but kept because a consumer still needs them.
    public var keptForConsumers: [UUID] = []
    /// The bytes the remaining sessions take.
    public var remainingBytes: Int64 = 0

    public init() {}
}
