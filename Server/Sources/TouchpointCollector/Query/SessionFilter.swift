/// Which sessions to list: of one user, active in a time range, containing an event of a name.
///
/// ```swift
/// let filter = SessionFilter(user: .any("ada"), range: TimeRange(from: yesterday), eventName: "checkout_success")
/// let page = try await services.query.sessions(source: "default", filter: filter)
/// ```
public struct SessionFilter: Sendable, Hashable {
    /// Only sessions of this user, when set.
    public var user: UserReference?
    /// Only sessions with events in this range: the session's first event before `to` and its
    /// last event at or after `from`.
    public var range: TimeRange
    /// Only sessions with at least one event of this name, when set.
    public var eventName: String?

    /// Creates a filter; the default lists every session.
    public init(user: UserReference? = nil, range: TimeRange = .all, eventName: String? = nil) {
        self.user = user
        self.range = range
        self.eventName = eventName
    }
}
