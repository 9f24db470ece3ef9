import Foundation
import TouchpointEvents

#if canImport(SwiftUI)
import SwiftUI
#endif
#if canImport(UIKit) && !os(watchOS)
import UIKit
#endif

extension TouchpointSDK {
    /// Tells the SDK the app was opened by `url`, as an app with scenes learns it (UIKit gives
    /// such an app no launch options): `Application Opened` carries `url` when the opening is
    /// still under way, and otherwise `Deep Link Opened` is recorded
    /// (``ApplicationLifecycleRecorder/openURL(_:referringApplication:)``).
    ///
    /// ```swift
    /// // SwiftUI: forwards onOpenURL
    /// WindowGroup { ContentView().touchpointOpenURL() }
    ///
    /// // UIKit scenes: forward the connection options' and later URLs
    /// func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options: UIScene.ConnectionOptions) {
    ///     TouchpointSDK.current?.openURLContexts(options.urlContexts)
    /// }
    /// func scene(_ scene: UIScene, openURLContexts contexts: Set<UIOpenURLContext>) {
    ///     TouchpointSDK.current?.openURLContexts(contexts)
    /// }
    /// ```
    /// - Parameters:
    ///   - url: the URL the app was asked to open.
    ///   - referringApplication: the bundle id of the app that asked, when known.
    public func openURL(_ url: URL, referringApplication: String? = nil) {
        applicationLifecycle.openURL(url, referringApplication: referringApplication)
    }
}

#if canImport(UIKit) && !os(watchOS)
extension TouchpointSDK {
    /// Forwards a scene's URLs (`UIScene.ConnectionOptions.urlContexts` at a launch, or
    /// `scene(_:openURLContexts:)`) with their source applications to ``openURL(_:referringApplication:)``.
    @MainActor
    public func openURLContexts(_ contexts: Set<UIOpenURLContext>) {
        for context in contexts { openURL(context.url, referringApplication: context.options.sourceApplication) }
    }
}
#endif

#if canImport(SwiftUI)
extension View {
    /// Forwards the URLs this view's scene is opened with (`onOpenURL`) to the started SDK
    /// (``TouchpointSDK/openURL(_:referringApplication:)``), so `Application Opened` carries the
    /// link that opened the app; `action`, when given, then handles the URL as the app's own
    /// `onOpenURL` would.
    ///
    /// ```swift
    /// WindowGroup {
    ///     ContentView()
    ///         .touchpointOpenURL { url in router.open(url) }
    /// }
    /// ```
    public func touchpointOpenURL(perform action: ((URL) -> Void)? = nil) -> some View {
        onOpenURL { url in
            TouchpointSDK.current?.openURL(url)
            action?(url)
        }
    }
}
#endif
