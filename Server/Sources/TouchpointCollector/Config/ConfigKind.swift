/// A kind of remote-config document the collector serves at `/v1/config/<kind>`.
public struct ConfigKind: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The path segment: `surveys`, `catalog`.
    public let rawValue: String

    /// Creates a kind from its path segment.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a kind from its path segment.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The survey configuration (`{"surveys": [...]}`), fetched by `SurveyConfigManager`.
    public static let surveys: ConfigKind = "surveys"
    /// The promo catalog (`{"apps": [...]}`), fetched by `PromoService`.
    public static let catalog: ConfigKind = "catalog"

    public var description: String { rawValue }
}
