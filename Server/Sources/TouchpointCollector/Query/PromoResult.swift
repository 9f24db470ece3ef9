/// How one promoted app did: impressions, taps and click-through, overall and per promoting app.
///
/// Built from `promo_impression` and `promo_tap` events (`properties.appID` is the promoted
/// app, `properties.currentAppID` the app that showed it).
public struct PromoResult: Sendable, Hashable {
    /// The promoted app.
    public var appID: String
    /// `promo_impression` events.
    public var impressions: Int
    /// `promo_tap` events.
    public var taps: Int
    /// The same counts per promoting app (`currentAppID`; "" when events did not say).
    public var byPromotingApp: [String: PromoCounts]

    /// Creates a result.
    public init(appID: String, impressions: Int = 0, taps: Int = 0, byPromotingApp: [String: PromoCounts] = [:]) {
        self.appID = appID
        self.impressions = impressions
        self.taps = taps
        self.byPromotingApp = byPromotingApp
    }

    /// Taps per impression, or nil without impressions.
    public var clickThrough: Double? { impressions > 0 ? Double(taps) / Double(impressions) : nil }
}

/// Impressions and taps of one promoted app in one promoting app.
public struct PromoCounts: Sendable, Hashable {
    /// `promo_impression` events.
    public var impressions: Int
    /// `promo_tap` events.
    public var taps: Int

    /// Creates counts.
    public init(impressions: Int = 0, taps: Int = 0) {
        self.impressions = impressions
        self.taps = taps
    }

    /// Taps per impression, or nil without impressions.
    public var clickThrough: Double? { impressions > 0 ? Double(taps) / Double(impressions) : nil }
}
