/// A moment in the app's life that Touchpoint reacts to.
public enum AppLifecycleEvent: Sendable, Hashable {
    /// The app moved to the background: flush logs, maybe end the session, deliver what is pending.
    case didEnterBackground
    /// The app is coming back to the foreground.
    case willEnterForeground
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
    private let handlers = Locked<[Int: @Sendable (AppLifecycleEvent) -> Void]>([:])
    private let nextID = Locked(0)

    public init() {}

    public func observe(_ handler: @escaping @Sendable (AppLifecycleEvent) -> Void) -> AppLifecycleObservation {
        let id = nextID.withLock { value in
            value += 1
            return value
        }
        handlers.withLock { $0[id] = handler }
        return AppLifecycleObservation { [handlers] in _ = handlers.withLock { $0.removeValue(forKey: id) } }
    }

    /// How many observations are alive (each ``observe(_:)`` whose token has not been released).
    public var observerCount: Int { handlers.withLock { $0.count } }

    /// Delivers `event` to every observer, on the calling thread.
    public func send(_ event: AppLifecycleEvent) {
        for handler in handlers.withLock({ Array($0.values) }) { handler(event) }
    }
}
