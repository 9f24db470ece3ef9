import TouchpointEvents

/// Something the user did, as a type: its name and its metadata.
///
/// ```swift
/// struct Events {
///     struct App {
///         static let name = "App"
///
///         struct Opened: TrackableEvent {
///             let appName: String
///
///             let identifier = EventIdentifier(object: name, action: "Opened")
///
///             var metadata: [String: Any] {
///                 return ["name": appName]
///             }
///         }
///     }
/// }
///
/// Events.App.Opened(appName: "My App").trigger()
/// ```
///
/// ``trigger()`` records the event in the local log (through the tracker's ``EventRecorder``)
/// and hands it, in log order, to every adapter whose rule allows it. Adapters receive this
/// very value, so they can `switch` on its type.
///
/// Events are read by several adapters' threads at once, so keep them values (structs of
/// values); do not mutate shared state from `metadata`.
public protocol TrackableEvent {
    /// The event's name; its ``EventIdentifier/stringValue`` is what the log stores.
    var identifier: EventIdentifier { get }

    /// The event's details. Values are converted to JSON when the event is triggered: strings,
    /// integers, floating-point numbers, Booleans, dates (ISO-8601 text), URLs (text), arrays,
    /// dictionaries, `NSNull` and `nil` (JSON `null`), `NSNumber`, ``EventValue`` and
    /// ``TrackableValueType`` values. Other values are reported and left out of the log entry;
    /// adapters still see the whole dictionary. Empty by default.
    var metadata: [String: Any] { get }
}

extension TrackableEvent {
    /// No metadata.
    public var metadata: [String: Any] { [:] }

    /// Records the event and routes it to the adapters, through ``GlobalTracker/current``.
    ///
    /// The metadata is converted on the calling thread; adapters are called later on their own
    /// threads. Safe from any thread, the main thread included.
    /// - Returns: the event as written to the log, or nil when the recorder rejected it.
    @discardableResult
    public func trigger() -> Event? {
        GlobalTracker.current.trigger(self)
    }
}
