import TouchpointCore
import TouchpointEvents

/// A trait that reached the tracker without a type, in an `identify` event recorded with
/// ``EventRecorder/record(_:properties:type:attachment:)``: each of its properties goes to the
/// adapters' `track(property:)` as one of these, in key order.
public struct RecordedProperty: TrackableProperty, Sendable, Hashable {
    /// The trait's name.
    public let identifier: String
    /// The recorded value.
    public let value: EventValue
    /// The `identify` event the trait came in.
    public let event: Event

    /// Creates the typed view of one recorded trait.
    public init(identifier: String, value: EventValue, event: Event) {
        self.identifier = identifier
        self.value = value
        self.event = event
    }

    /// A string, integer, number or Boolean as the Swift value; arrays and objects as
    /// ``EventValue``; nil for `null`.
    public var trackedValue: (any TrackableValueType)? {
        switch value {
        case .null: return nil
        case .string(let text): return text
        case .int(let number): return number
        case .double(let number): return number
        case .bool(let flag): return flag
        case .array, .object: return value
        }
    }
}
