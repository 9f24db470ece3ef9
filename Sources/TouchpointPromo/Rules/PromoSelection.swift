/// Decides which apps one app's "More Apps" list shows, and in what order.
///
/// 1. The current app is always excluded.
/// 2. If the catalog has a rule for the current app (`promoRules`), only the listed apps are
///    shown; otherwise every other app is.
/// 3. If a maximum applies (``maximumApps``, else the catalog's `maxApps`) and more apps
///    qualify, the list is cut: to the first ones in catalog order when no qualifying app has a
///    `weight`, otherwise by ``PromoRotation``, a weighted choice that is sticky per user.
/// 4. Whatever is shown keeps catalog order, which is display order.
///
/// ```swift
/// let selection = PromoSelection(currentAppID: "myapp1", maximumApps: 3, rotationKey: userID)
/// let apps = selection.apps(from: catalog)
/// ```
public struct PromoSelection: Sendable, Hashable {
    /// The promoting app's catalog id.
    public var currentAppID: String
    /// The most apps to show; nil uses the catalog's `maxApps` (and no limit when it has none).
    public var maximumApps: Int?
    /// What makes the rotation sticky: a user id or install id. The same key always gets the
    /// same choice from the same catalog.
    public var rotationKey: String

    /// Creates a selection.
    /// - Parameters:
    ///   - currentAppID: the promoting app's catalog id.
    ///   - maximumApps: the most apps to show, overriding the catalog's `maxApps`.
    ///   - rotationKey: the user's sticky key (an empty key gives every user the same choice).
    public init(currentAppID: String, maximumApps: Int? = nil, rotationKey: String = "") {
        self.currentAppID = currentAppID
        self.maximumApps = maximumApps
        self.rotationKey = rotationKey
    }

    /// The apps every rule allows, before any maximum: catalog order, current app excluded.
    /// - Parameter catalog: the catalog.
    /// - Returns: the eligible apps.
    public func eligibleApps(from catalog: PromoCatalog) -> [PromoApp] {
        let others = catalog.apps.filter { $0.id != currentAppID }
        guard let allowed = catalog.promoRules[currentAppID] else { return others }
        let allowedIDs = Set(allowed)
        return others.filter { allowedIDs.contains($0.id) }
    }

    /// The apps to show, in display order.
    /// - Parameter catalog: the catalog.
    /// - Returns: the eligible apps, cut to the maximum.
    public func apps(from catalog: PromoCatalog) -> [PromoApp] {
        let eligible = eligibleApps(from: catalog)
        guard let limit = (maximumApps ?? catalog.maxApps).map({ max(0, $0) }), limit < eligible.count else {
            return eligible
        }
        guard eligible.contains(where: { $0.weight != nil }) else { return Array(eligible.prefix(limit)) }
        return PromoRotation.choose(limit, from: eligible, key: rotationKey + "\u{1F}" + currentAppID)
    }
}
