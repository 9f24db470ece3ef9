/// Shows an app's App Store page: an `SKOverlay` on iOS (`SKOverlayAppStorePresenter` in
/// `TouchpointUI`), a web page elsewhere, a recording double in tests.
///
/// ``PromoService/handleAppTap(_:)`` decides what to show and calls ``presentAppStore(_:)``;
/// implementations only display it.
@MainActor
public protocol AppStorePresenter {
    /// Shows the App Store for `request`.
    /// - Parameter request: the app and the campaign attribution.
    func presentAppStore(_ request: AppStoreRequest)
}
