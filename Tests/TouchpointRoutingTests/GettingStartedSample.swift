// The "Getting started with routing" article's samples, as written; the test runs them.
import Foundation
import Testing
import TouchpointEvents
import TouchpointRouting
import TouchpointTesting

private enum Checkout {
    struct Started: TrackableEvent {
        let items: Int
        let identifier = EventIdentifier(object: "Checkout", action: "Started")
        var metadata: [String: Any] { ["items": items] }
    }
}

private final class ConsoleAdapter: AnalyticsAdapter {
    var eventTrackingRule: EventTrackingRule? { EventTrackingRule(.prohibit, names: ["Debug: Tapped"]) }

    func configure() throws {}

    func track(event: any TrackableEvent) throws {
        print(event.identifier, event.metadata)
    }

    func track(property: any TrackableProperty) throws {
        print(property.identifier, property.trackedValue.map { "\($0)" } ?? "none")
    }
}

/// Compiled, never called: it would track into the app's shared recorder.
private func startSample() {
    GlobalTracker.startTracking(adapters: [ConsoleAdapter()])
    Checkout.Started(items: 3).trigger()
}

struct GettingStartedSampleTests {
    @Test func theTestSampleRuns() async throws {
        let directory = try TemporaryDirectory()
        let tracker = GlobalTracker(recorder: EventRecorder(directory: directory.url))
        let adapter = InMemoryAdapter(name: "Console")
        tracker.startTracking(adapters: [adapter])
        GlobalTracker.$scoped.withValue(tracker) { _ = Checkout.Started(items: 3).trigger() }
        _ = await tracker.waitUntilDelivered()
        #expect(adapter.eventNames == ["Checkout: Started"])
        tracker.stopTracking()
    }
}
