import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointRouting
import TouchpointTesting

/// A recorder in its own temporary folder and a tracker routing from it.
struct RoutingHarness {
    let directory: TemporaryDirectory
    let recorder: EventRecorder
    let tracker: GlobalTracker

    init(configuration: GlobalTrackerConfiguration = .init()) throws {
        directory = try TemporaryDirectory(prefix: "routing")
        recorder = EventRecorder(directory: directory.url)
        tracker = GlobalTracker(recorder: recorder, configuration: configuration)
    }

    /// Waits for the adapters (all, or those named), with a generous bound so a broken build
    /// fails instead of hanging.
    func delivered(to adapters: Set<String>? = nil) async -> Bool {
        await tracker.waitUntilDelivered(adapters: adapters, timeout: .seconds(30))
    }

    func loggedNames() async -> [String] {
        await recorder.allEvents().map(\.name)
    }
}

/// A typed event named `Numbered: <lane> - <index>`.
struct Numbered: TrackableEvent {
    let lane: Int
    let index: Int

    var identifier: EventIdentifier { EventIdentifier(object: "Numbered", action: "\(lane)", label: "\(index)") }
    var metadata: [String: Any] { ["lane": lane, "index": index] }
}

struct Tapped: TrackableEvent {
    let identifier = EventIdentifier(object: "Button", action: "Tapped")
}

struct Viewed: TrackableEvent {
    let identifier = EventIdentifier(object: "Screen", action: "Viewed")
}

struct EmailProperty: TrackableProperty {
    let identifier = "email"
    let value: String?
    var trackedValue: (any TrackableValueType)? { value }
}

struct AgeProperty: TrackableProperty {
    let identifier = "age"
    let value: Int
    var trackedValue: (any TrackableValueType)? { value }
}

/// Collects log messages from any thread.
final class LogLines: Sendable {
    private let lines = Locked<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.value }
}

/// An adapter whose `track(event:)` stops at a gate, to play a slow or hanging tool.
final class GatedAdapter: AnalyticsAdapter, Sendable {
    let name: String
    let gate = Gate()
    let received = InMemoryAdapter()

    init(name: String) { self.name = name }

    func configure() {}

    func track(event: any TrackableEvent) {
        gate.passBlocking()
        received.track(event: event)
    }

    func track(property: any TrackableProperty) { received.track(property: property) }

    private let resetCount = Locked(0)
    /// How many times `reset()` was called.
    var resets: Int { resetCount.value }
    func reset() { resetCount.withLock { $0 += 1 } }
}

/// An adapter whose `configure()` stops at a gate.
final class SlowConfigureAdapter: AnalyticsAdapter, Sendable {
    let gate = Gate()
    let received = InMemoryAdapter()

    func configure() { gate.passBlocking() }
    func track(event: any TrackableEvent) { received.track(event: event) }
    func track(property: any TrackableProperty) { received.track(property: property) }
}

struct AdapterFailure: Error, CustomStringConvertible {
    let what: String
    var description: String { "refused \(what)" }
}

/// An adapter that throws for events named `boom` and for the property `secret`.
final class FailingAdapter: AnalyticsAdapter, Sendable {
    let name = "Failing"
    let received = InMemoryAdapter()

    func configure() {}

    func track(event: any TrackableEvent) throws {
        if event.identifier.stringValue == "boom" { throw AdapterFailure(what: "boom") }
        received.track(event: event)
    }

    func track(property: any TrackableProperty) throws {
        if property.identifier == "secret" { throw AdapterFailure(what: "secret") }
        received.track(property: property)
    }
}

/// An adapter whose `configure()` throws.
final class UnconfigurableAdapter: AnalyticsAdapter, Sendable {
    let name = "Broken"
    let calls = Locked(0)

    func configure() throws { throw AdapterFailure(what: "to configure") }
    func track(event: any TrackableEvent) { calls.withLock { $0 += 1 } }
    func track(property: any TrackableProperty) { calls.withLock { $0 += 1 } }
}
