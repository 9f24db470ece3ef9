/// Which page of a list to return: at most ``limit`` items after ``cursor``.
public struct PageRequest: Sendable, Hashable {
    /// The most items a page may hold.
    public static let maximumLimit = 1000

    /// How many items to return (1…``maximumLimit``).
    public var limit: Int
    /// The ``Page/nextCursor`` of the previous page; nil for the first page.
    public var cursor: String?

    /// Creates a page request; `limit` is clamped to 1…``maximumLimit``.
    public init(limit: Int = 100, cursor: String? = nil) {
        self.limit = min(max(limit, 1), Self.maximumLimit)
        self.cursor = cursor
    }
}

/// One page of a list, and where the next page starts.
public struct Page<Item: Sendable>: Sendable {
    /// The items, in the list's order.
    public var items: [Item]
    /// Pass this as ``PageRequest/cursor`` for the next page; nil when this is the last page.
    public var nextCursor: String?

    /// Creates a page.
    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

extension Page: Equatable where Item: Equatable {}
