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

extension MessageType {
    /// The one-letter path analytics.js posts this call to: `/v1/t` for track, and so on.
    public var shortPath: String {
        switch self {
        case .track: "t"
        case .identify: "i"
        case .page: "p"
        case .screen: "s"
        case .group: "g"
        case .alias: "a"
        }
    }
}
