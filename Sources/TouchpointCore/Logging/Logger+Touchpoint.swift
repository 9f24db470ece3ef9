import Logging

extension Logger {
    /// A logger for one Touchpoint component, labelled `touchpoint.<component>`.
    ///
    /// Touchpoint logs through swift-log, so a server-side app sees its messages in whatever
    /// handler it bootstrapped; an app that bootstrapped nothing gets swift-log's default.
    public static func touchpoint(_ component: String) -> Logger {
        Logger(label: "touchpoint.\(component)")
    }
}
