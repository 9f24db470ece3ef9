#if canImport(UIKit) && !os(watchOS)
import Foundation
import UIKit

/// Forwards UIKit's launch, background, foreground, activation and terminate notifications as
/// ``AppLifecycleEvent``s (the launch with the URL and source application of its launch options;
/// an app with scenes forwards its scenes' URLs itself, which `Application Opened` then carries).
///
/// Compiled on Apple platforms only; the logic that reacts to these events is platform-neutral
/// and tested through ``ManualAppLifecycle``.
public struct UIKitAppLifecycle: AppLifecycle {
    public init() {}

    /// UIKit posts the launch: start the SDK before it, in `App.init` or
    /// `application(_:willFinishLaunchingWithOptions:)`/`didFinishLaunching…` (the notification
    /// follows the delegate's method).
    public var announcesLaunch: Bool { true }

    /// UIKit posts `didBecomeActive` after each opening, after a scene's connection options and
    /// `openURLContexts` (which the app forwards with `TouchpointSDK.openURL(_:referringApplication:)`).
    public var announcesActivation: Bool { true }

    public func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) -> AppLifecycleObservation {
        let center = NotificationCenter.default
        let pairs: [(Notification.Name, AppLifecycleEvent)] = [
            (UIApplication.didEnterBackgroundNotification, .didEnterBackground),
            (UIApplication.willEnterForegroundNotification, .willEnterForeground),
            (UIApplication.willTerminateNotification, .willTerminate),
            (UIApplication.didBecomeActiveNotification, .didBecomeActive),
        ]
        var tokens = pairs.map { name, event in
            center.addObserver(forName: name, object: nil, queue: nil) { _ in handler(event) }
        }
        tokens.append(
            center.addObserver(forName: UIApplication.didFinishLaunchingNotification, object: nil, queue: nil) {
                notification in
                let options = notification.userInfo ?? [:]
                let url = options[UIApplication.LaunchOptionsKey.url.rawValue] as? URL
                let source = options[UIApplication.LaunchOptionsKey.sourceApplication.rawValue] as? String
                handler(.didFinishLaunching(url: url, referringApplication: source))
            })
        let box = ObserverTokens(tokens)
        return AppLifecycleObservation { box.remove(from: center) }
    }
}

/// The observer tokens of one observation.
private final class ObserverTokens: @unchecked Sendable {
    // Safe: the tokens are set once in init and only read afterwards.
    private let tokens: [any NSObjectProtocol]

    init(_ tokens: [any NSObjectProtocol]) { self.tokens = tokens }

    func remove(from center: NotificationCenter) {
        for token in tokens { center.removeObserver(token) }
    }
}
#endif
