/// The calls of Segment's HTTP Tracking API that the collector accepts.
public enum MessageType: String, Sendable, Hashable, CaseIterable {
    /// An event the user did (`event` names it).
    case track
    /// Who the user is (`traits`).
    case identify
    /// A web page view (`name`).
    case page
    /// A mobile screen view (`name`).
    case screen
    /// Membership of a group (`groupId`).
    case group
    /// A link between two user ids (`previousId`).
    case alias
}
