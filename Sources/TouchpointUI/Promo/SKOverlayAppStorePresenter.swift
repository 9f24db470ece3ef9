#if canImport(SwiftUI) && canImport(StoreKit) && os(iOS)
import StoreKit
import TouchpointPromo
import UIKit

/// Shows a tapped app in an `SKOverlay` over the active window scene, with the request's
/// provider and campaign tokens for attribution; opens the App Store page when no scene is active.
@MainActor
public final class SKOverlayAppStorePresenter: AppStorePresenter {
    /// Where the overlay appears.
    public var position: SKOverlay.Position

    /// Creates a presenter.
    /// - Parameter position: where the overlay appears (`.bottom` by default).
    public init(position: SKOverlay.Position = .bottom) {
        self.position = position
    }

    public func presentAppStore(_ request: AppStoreRequest) {
        let configuration = SKOverlay.AppConfiguration(appIdentifier: request.appStoreID, position: position)
        configuration.providerToken = request.providerToken
        configuration.campaignToken = request.campaignToken
        let scene = UIApplication.shared.connectedScenes
            .compactMap { $0 as? UIWindowScene }
            .first { $0.activationState == .foregroundActive }
        guard let scene else {
            UIApplication.shared.open(request.webURL)
            return
        }
        SKOverlay(configuration: configuration).present(in: scene)
    }
}
#endif
