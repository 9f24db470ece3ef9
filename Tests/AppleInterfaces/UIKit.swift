// An interface stub of the UIKit declarations Touchpoint uses, for type-checking its Apple-only
// code on Linux (scripts/check-apple.sh); test-only, never run. watchOS has a UIKit module without
// UIApplication or scenes, so on watchOS (-D APPLE_WATCHOS) this module is empty; on macOS it is not
// built at all (no UIKit outside Mac Catalyst).
@_exported import Foundation

#if !APPLE_WATCHOS
@MainActor @preconcurrency
open class UIResponder: NSObject {}

@MainActor @preconcurrency
open class UIApplication: UIResponder {
    public struct OpenExternalURLOptionsKey: Hashable, RawRepresentable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
    }

    public struct LaunchOptionsKey: Hashable, RawRepresentable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let url = LaunchOptionsKey(rawValue: "UIApplicationLaunchOptionsURLKey")
        public static let sourceApplication = LaunchOptionsKey(
            rawValue: "UIApplicationLaunchOptionsSourceApplicationKey")
    }

    open class var shared: UIApplication { fatalError() }
    open var connectedScenes: Set<UIScene> { fatalError() }
    open func open(
        _ url: URL, options: [OpenExternalURLOptionsKey: Any] = [:],
        completionHandler completion: (@MainActor @Sendable (Bool) -> Void)? = nil
    ) {}

    // Notification names are nonisolated (NS_SWIFT_NONISOLATED in the iOS 17 and later SDKs), so
    // they can be read from any thread.
    nonisolated public static let didFinishLaunchingNotification = NSNotification.Name(
        "UIApplicationDidFinishLaunchingNotification")
    nonisolated public static let didEnterBackgroundNotification = NSNotification.Name(
        "UIApplicationDidEnterBackgroundNotification")
    nonisolated public static let willEnterForegroundNotification = NSNotification.Name(
        "UIApplicationWillEnterForegroundNotification")
    nonisolated public static let willTerminateNotification = NSNotification.Name(
        "UIApplicationWillTerminateNotification")
    nonisolated public static let didBecomeActiveNotification = NSNotification.Name(
        "UIApplicationDidBecomeActiveNotification")
}

@MainActor @preconcurrency
open class UIScene: UIResponder {
    public enum ActivationState: Int, Sendable {
        case unattached = -1
        case foregroundActive = 0
        case foregroundInactive = 1
        case background = 2
    }

    open var activationState: ActivationState { fatalError() }

    @MainActor @preconcurrency
    open class OpenURLOptions: NSObject {
        open var sourceApplication: String? { fatalError() }
    }

    @MainActor @preconcurrency
    open class ConnectionOptions: NSObject {
        open var urlContexts: Set<UIOpenURLContext> { fatalError() }
    }
}

@MainActor @preconcurrency
open class UIOpenURLContext: NSObject {
    open var url: URL { fatalError() }
    open var options: UIScene.OpenURLOptions { fatalError() }
}

@MainActor @preconcurrency
open class UIWindowScene: UIScene {}

@MainActor @preconcurrency
open class UIViewController: UIResponder {
    open func viewDidAppear(_ animated: Bool) {}
}
#endif
