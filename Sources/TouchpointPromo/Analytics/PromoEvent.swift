/// What a ``PromoService`` tells its ``PromoEventDelegate`` (and records into the event log as
/// `promo_impression` / `promo_tap`).
public enum PromoEvent: Sendable, Hashable {
    /// An app's row appeared: once per appearance, not per redraw.
    case impression(appID: String)
    /// The user tapped an app's row: every tap.
    case tap(appID: String)

    /// The promoted app's catalog id.
    public var appID: String {
        switch self {
        case .impression(let appID), .tap(let appID): return appID
        }
    }

    /// The event's name in the event log: `promo_impression` or `promo_tap`.
    public var name: String {
        switch self {
        case .impression: return "promo_impression"
        case .tap: return "promo_tap"
        }
    }
}
