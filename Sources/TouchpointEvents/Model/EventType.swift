/// What kind of call an event stands for, in the Segment sense: most are `track`.
public struct EventType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// Something the user did (`record(_:properties:)`). The default.
    public static let track = EventType(rawValue: "track")
    /// New or changed traits of the user; the properties are the traits.
    public static let identify = EventType(rawValue: "identify")
    /// A screen the user saw; the name is the screen's name (a `category` property is sent as
    /// Segment's `category`).
    public static let screen = EventType(rawValue: "screen")
    /// The user joined a group (a company, a team); the name is the group's id and the
    /// properties are the group's traits.
    public static let group = EventType(rawValue: "group")
    /// The user's id changed: the event's user id is the new one and its `previousId` property
    /// the old one (or the anonymous id).
    public static let alias = EventType(rawValue: "alias")

    public var description: String { rawValue }
}
