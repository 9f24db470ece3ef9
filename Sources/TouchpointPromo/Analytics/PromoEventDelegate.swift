/// Receives a ``PromoService``'s impressions and taps, for an analytics tool of the app's choice.
///
/// The service holds its delegate strongly, so a handler created inline is not lost (unlike a
/// `weak` delegate, which silently drops events when nobody else keeps it). A delegate that
/// holds its service must break that cycle itself.
///
/// ```swift
/// class AnalyticsHandler: PromoEventDelegate {
///     func promoService(_ service: PromoService, didEmit event: PromoEvent) {
///         switch event {
///         case .impression(let appID): Analytics.log("promo_impression", ["app_id": appID])
///         case .tap(let appID): Analytics.log("promo_tap", ["app_id": appID])
///         }
///     }
/// }
/// ```
@MainActor
public protocol PromoEventDelegate {
    /// Called on the main actor for each impression and tap, after the event was recorded.
    /// - Parameters:
    ///   - service: the service that saw it.
    ///   - event: what happened.
    func promoService(_ service: PromoService, didEmit event: PromoEvent)
}
