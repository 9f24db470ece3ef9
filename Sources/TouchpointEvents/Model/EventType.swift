/// What kind of call an event stands for, in the Segment sense: most are `track`.
public struct EventType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// Something the user did (`record(_:properties:)`). The default.
    public static let track = EventType(rawValue: "track")
    /// New or changed traits of the user; the properties are the traits.
    public static let identify = EventType(rawValue: "identify")
    /// A screen the user saw; the name is the screen's name.
    public static let screen = EventType(rawValue: "screen")

    public var description: String { rawValue }
}
