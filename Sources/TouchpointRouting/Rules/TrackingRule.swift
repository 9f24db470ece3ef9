/// Whether a rule's list names what an adapter receives or what it does not.
public enum TrackingRule: Sendable, Hashable {
    /// The adapter receives only what the rule lists.
    case allow
    /// The adapter receives everything except what the rule lists.
    case prohibit
}
