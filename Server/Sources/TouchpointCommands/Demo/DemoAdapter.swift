import Foundation
import Touchpoint

/// The demo's analytics adapter: it stands for the tools an app routes events to (Mixpanel,
/// Amplitude, …) and counts what the tracker hands it.
final class DemoAdapter: AnalyticsAdapter, Sendable {
    let name = "DemoConsole"
    private let delivered = Locked(0)

    /// How many events and properties reached the adapter.
    var count: Int { delivered.value }

    func configure() {}

    func track(event: any TrackableEvent) {
        delivered.withLock { $0 += 1 }
    }

    func track(property: any TrackableProperty) {
        delivered.withLock { $0 += 1 }
    }
}
