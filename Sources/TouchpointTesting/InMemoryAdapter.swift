import TouchpointCore
import TouchpointEvents
import TouchpointRouting

/// An ``AnalyticsAdapter`` that keeps what it received, in order, for tests.
///
/// ```swift
/// let adapter = InMemoryAdapter(name: "Mixpanel")
/// tracker.startTracking(adapters: [adapter])
/// Events.App.Opened(appName: "My App").trigger()
/// await tracker.waitUntilDelivered()
/// #expect(adapter.eventNames == ["App: Opened"])
/// ```
///
/// It is `Sendable`, so a test can keep it after handing it to the tracker.
public final class InMemoryAdapter: AnalyticsAdapter, Sendable {
    /// One call the adapter received.
    public enum Delivery: Sendable, Hashable {
        /// `track(event:)`: the event's name, its metadata as JSON, and its Swift type's name.
        case event(name: String, metadata: [String: EventValue], type: String)
        /// `track(property:)`: the identifier, the tracked value (nil when there was none), and
        /// the property's Swift type's name.
        case property(identifier: String, value: EventValue?, type: String)
        /// `reset()`: the user was forgotten.
        case reset
    }

    public let name: String
    public let eventTrackingRule: EventTrackingRule?
    public let propertyTrackingRule: PropertyTrackingRule?
    private let state = Locked<(configured: Int, deliveries: [Delivery])>((0, []))

    /// Creates an adapter.
    /// - Parameters:
    ///   - name: its name in logs and statistics.
    ///   - eventTrackingRule: which events it receives; all when nil.
    ///   - propertyTrackingRule: which properties it receives; all when nil.
    public init(
        name: String = "InMemoryAdapter", eventTrackingRule: EventTrackingRule? = nil,
        propertyTrackingRule: PropertyTrackingRule? = nil
    ) {
        self.name = name
        self.eventTrackingRule = eventTrackingRule
        self.propertyTrackingRule = propertyTrackingRule
    }

    public func configure() {
        state.withLock { $0.configured += 1 }
    }

    public func track(event: any TrackableEvent) {
        let delivery = Delivery.event(
            name: event.identifier.stringValue, metadata: MetadataConversion(event.metadata).properties,
            type: String(describing: type(of: event)))
        state.withLock { $0.deliveries.append(delivery) }
    }

    public func track(property: any TrackableProperty) {
        let delivery = Delivery.property(
            identifier: property.identifier, value: property.trackedValue?.eventValue,
            type: String(describing: type(of: property)))
        state.withLock { $0.deliveries.append(delivery) }
    }

    public func reset() {
        state.withLock { $0.deliveries.append(.reset) }
    }

    /// How many times `configure()` was called.
    public var configureCount: Int { state.withLock { $0.configured } }

    /// Everything received, in order.
    public var deliveries: [Delivery] { state.withLock { $0.deliveries } }

    /// The names of the events received, in order.
    public var eventNames: [String] {
        deliveries.compactMap { delivery in
            if case .event(let name, _, _) = delivery { return name }
            return nil
        }
    }

    /// The identifiers and values of the properties received, in order.
    public var properties: [(identifier: String, value: EventValue?)] {
        deliveries.compactMap { delivery in
            if case .property(let identifier, let value, _) = delivery { return (identifier, value) }
            return nil
        }
    }
}
