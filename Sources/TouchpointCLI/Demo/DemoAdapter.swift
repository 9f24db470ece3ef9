import Foundation
import Touchpoint

/// The demo's analytics adapter: it stands for the tools an app routes events to, counts what it
/// receives, and prints it when asked to.
final class DemoAdapter: AnalyticsAdapter, Sendable {
    let name = "DemoConsole"
    private let delivered = Locked(0)
    private let write: (@Sendable (String) -> Void)?

    /// - Parameter write: where to print each event; nil prints nothing.
    init(write: (@Sendable (String) -> Void)?) {
        self.write = write
    }

    /// How many events and properties reached the adapter.
    var count: Int { delivered.value }

    func configure() {}

    func track(event: any TrackableEvent) {
        delivered.withLock { $0 += 1 }
        write?("  [\(name)] \(event.identifier.stringValue)\n")
    }

    func track(property: any TrackableProperty) {
        delivered.withLock { $0 += 1 }
    }
}
