import TouchpointEvents

/// An event that reached the tracker without a type: recorded with
/// ``EventRecorder/record(_:properties:type:attachment:)`` by app code or another Touchpoint
/// module, handed to adapters as a ``TrackableEvent`` so that name rules and `track(event:)`
/// work the same for both doors.
///
/// ```swift
/// func track(event: TrackableEvent) {
///     if let recorded = event as? RecordedEvent {
///         print(recorded.event.messageId)
///     }
/// }
/// ```
public struct RecordedEvent: TrackableEvent, Sendable, Hashable {
    /// The event as written to the log.
    public let event: Event

    /// The recorded name as an identifier (`identifier.stringValue == event.name`).
    public let identifier: EventIdentifier

    /// Creates the typed view of a recorded event.
    public init(_ event: Event) {
        self.event = event
        identifier = EventIdentifier(name: event.name)
    }

    /// The recorded properties as plain Swift values: `String`, `Int`, `Double`, `Bool`,
    /// `[Any]`, `[String: Any]`, and `NSNull` for JSON `null`.
    public var metadata: [String: Any] { event.properties.mapValues(\.plainValue) }
}
