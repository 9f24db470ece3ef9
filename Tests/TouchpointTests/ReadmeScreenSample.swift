// The README's screen views, as an app writes them. They compile where SwiftUI (and UIKit) exist;
// on Linux scripts/check-apple.sh type-checks them for each Apple platform against interface stubs.
#if canImport(SwiftUI)
import SwiftUI
import Touchpoint

struct CartScreen: View {
    var body: some View {
        Text("Cart")
            .touchpointScreen("Cart", category: "Shop")
    }
}
#endif

#if canImport(UIKit) && !os(watchOS)
import UIKit
import Touchpoint

/// Recorded as the screen `Cart` each time it appears.
final class CartViewController: ScreenTrackingViewController {}

/// Recorded under a name of its own.
final class CheckoutViewController: ScreenTrackingViewController {
    override var screenName: String? { "Checkout" }
}
#endif

// The README's links that open the app, as an app with scenes forwards them.
#if canImport(SwiftUI)
import SwiftUI
import Touchpoint

struct LinkedRoot: View {
    var body: some View {
        Text("Shop")
            .touchpointOpenURL { url in print("route to", url) }
    }
}
#endif

#if canImport(UIKit) && !os(watchOS)
import UIKit
import Touchpoint

/// What a scene delegate's `scene(_:willConnectTo:options:)` and `scene(_:openURLContexts:)` do.
@MainActor
enum LinkedScene {
    static func willConnect(options: UIScene.ConnectionOptions) {
        TouchpointSDK.current?.openURLContexts(options.urlContexts)
    }

    static func open(_ contexts: Set<UIOpenURLContext>) {
        TouchpointSDK.current?.openURLContexts(contexts)
    }
}
#endif
