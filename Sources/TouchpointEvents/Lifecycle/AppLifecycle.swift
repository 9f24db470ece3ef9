import Foundation

/// A moment in the app's life that Touchpoint reacts to.
public enum AppLifecycleEvent: Sendable, Hashable {
    /// The app finished launching, opened by `url` from `referringApplication` when it was
    /// opened by a link (UIKit's launch options): `Application Opened` with `from_background`
    /// false.
    case didFinishLaunching(url: URL?, referringApplication: String?)
    /// The app moved to the background: flush logs, maybe end the session, deliver what is pending.
    case didEnterBackground
    /// The app is coming back to the foreground.
    case willEnterForeground
    /// The app became active (UIKit's `didBecomeActive`): where the lifecycle announces it
    /// (``AppLifecycle/announcesActivation``), `Application Opened` waits for it, so a URL the app
    /// forwards from its scene in between (``ApplicationLifecycleRecorder/openURL(_:referringApplication:)``)
    /// is carried.
    case didBecomeActive
    /// The app is about to terminate.
    case willTerminate
}

/// A source of app lifecycle events.
///
/// On iOS and tvOS, ``UIKitAppLifecycle`` forwards UIKit's notifications; on Linux and in
/// tests, ``ManualAppLifecycle`` is driven by hand (a server has no background).
public protocol AppLifecycle: Sendable {
    /// Starts calling `handler` for each lifecycle event, until the returned token is released.
    func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) -> AppLifecycleObservation

    /// Whether this source reports ``AppLifecycleEvent/didFinishLaunching(url:referringApplication:)``
    /// (false by default). Where it does not, the launch is the moment the SDK starts.
    var announcesLaunch: Bool { get }

    /// Whether this source reports ``AppLifecycleEvent/didBecomeActive`` after each launch and
    /// return from the background (false by default). Where it does, `Application Opened` is
    /// recorded then, with the URL a scene delivered meanwhile; elsewhere at once.
    var announcesActivation: Bool { get }
}

extension AppLifecycle {
    public var announcesLaunch: Bool { false }
    public var announcesActivation: Bool { false }
}

/// Keeps a lifecycle observation alive; releasing it stops the calls.
public final class AppLifecycleObservation: Sendable {
    private let cancel: @Sendable () -> Void

    public init(cancel: @escaping @Sendable () -> Void) { self.cancel = cancel }

    deinit { cancel() }
}

/// An ``AppLifecycle`` driven by calling ``send(_:)``: for tests, and for hosts that learn about
/// backgrounding their own way.
public final class ManualAppLifecycle: AppLifecycle {
    private let handlers = Locked<[(id: Int, handler: @Sendable (AppLifecycleEvent) -> Void)]>([])
    private let nextID = Locked(0)
    /// Whether ``send(_:)`` will deliver the launch (``AppLifecycleEvent/didFinishLaunching(url:referringApplication:)``).
    public let announcesLaunch: Bool
    /// Whether ``send(_:)`` will deliver ``AppLifecycleEvent/didBecomeActive`` after each opening.
    public let announcesActivation: Bool

    /// - Parameters:
    ///   - announcesLaunch: whether the launch will be sent (as UIKit's lifecycle does).
    ///   - announcesActivation: whether activations will be sent (as UIKit's lifecycle does).
    public init(announcesLaunch: Bool = false, announcesActivation: Bool = false) {
        self.announcesLaunch = announcesLaunch
        self.announcesActivation = announcesActivation
    }

    public func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) -> AppLifecycleObservation {
        let id = nextID.withLock { value in
            value += 1
            return value
        }
        handlers.withLock { $0.append((id, handler)) }
        return AppLifecycleObservation { [handlers] in handlers.withLock { $0.removeAll { $0.id == id } } }
    }

    /// How many observations are alive (each ``observe(_:)`` whose token has not been released).
    public var observerCount: Int { handlers.withLock { $0.count } }

    /// Delivers `event` to every observer, in the order they started observing, on the calling thread.
    public func send(_ event: AppLifecycleEvent) {
        for (_, handler) in handlers.withLock({ $0 }) { handler(event) }
    }
}
