extension GlobalTracker {
    /// How much the tracker tells its log handler (``GlobalTracker/log(_:)``, `print` by default).
    ///
    /// `.info` prints one line per delivery:
    /// ```
    /// -[Intercom]: EVENT TRIGGERED - 'Event Detail: Viewed'
    /// -[Intercom]: PROPERTY UPDATED - 'email'
    /// ```
    /// `.verbose` adds the recorded properties, sorted by key, and a property's value:
    /// ```
    /// -[Intercom]: EVENT TRIGGERED - 'Event Detail: Viewed'
    ///  > event_id: 21421
    ///  > state: rendering
    /// -[Intercom]: PROPERTY UPDATED - 'email'
    ///  > value: test@test.com
    /// ```
    /// Strings are written as they are; other values as JSON. Problems (an adapter that threw,
    /// a metadata value that cannot be recorded) are written at `.info` and `.verbose`:
    /// ```
    /// -[Intercom]: EVENT FAILED - 'Event Detail: Viewed' - <error>
    /// -[Intercom]: PROPERTY FAILED - 'email' - <error>
    /// -[Intercom]: CONFIGURE FAILED - <error>
    /// -[GlobalTracker]: VALUE NOT RECORDED - 'Event Detail: Viewed' - when: a Foo cannot be recorded as JSON
    /// ```
    /// Whatever the level, the same messages also go to swift-log (`touchpoint.routing`):
    /// deliveries at `.debug`, problems at `.warning` and `.error`.
    public enum LoggingLevel: Int, Sendable, Hashable, Comparable {
        /// Nothing (the default).
        case none
        /// One line per event or property and adapter.
        case info
        /// Also the event's properties and the property's value.
        case verbose

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }
}
