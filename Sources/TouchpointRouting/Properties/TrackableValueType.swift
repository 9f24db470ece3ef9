import TouchpointCore
import TouchpointEvents

/// A value a ``TrackableProperty`` can hold: `String`, `Int`, `Double` and `Bool` out of the box,
/// ``EventValue`` for anything JSON, and any enum whose raw value is trackable.
///
/// ```swift
/// enum Plan: String, TrackableValueType {
///     case free, pro
/// }
///
/// struct PlanProperty: TrackableProperty {
///     let identifier = "plan"
///     let value: Plan
///     var trackedValue: TrackableValueType? { return value }
/// }
/// ```
public protocol TrackableValueType {
    /// The value as recorded in the log and kept in the user's traits.
    var eventValue: EventValue { get }
}

extension TrackableValueType {
    /// The value as text: a string itself, a number or Boolean in its JSON spelling (`42`,
    /// `0.5`, `true`); nil for `null`, arrays and objects.
    public var stringValue: String? {
        switch eventValue {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .double(let number): return EventValue.double(number).jsonString()
        case .bool(let flag): return flag ? "true" : "false"
        case .null, .array, .object: return nil
        }
    }

    /// The value as an integer, when it is one (or a whole `Double`).
    public var intValue: Int? { eventValue.intValue }

    /// The value as a `Double`, when it is a number.
    public var doubleValue: Double? { eventValue.doubleValue }

    /// The value as a Boolean, when it is one.
    public var boolValue: Bool? { eventValue.boolValue }
}

extension TrackableValueType where Self: RawRepresentable, Self.RawValue: TrackableValueType {
    /// The raw value's ``eventValue``: enums with a trackable raw value need only declare the
    /// conformance.
    public var eventValue: EventValue { rawValue.eventValue }
}

extension String: TrackableValueType {
    /// The string.
    public var eventValue: EventValue { .string(self) }
}

extension Int: TrackableValueType {
    /// The integer.
    public var eventValue: EventValue { .int(self) }
}

extension Double: TrackableValueType {
    /// The number (`null` when it is not finite, as JSON has no such numbers).
    public var eventValue: EventValue { isFinite ? .double(self) : .null }
}

extension Bool: TrackableValueType {
    /// The Boolean.
    public var eventValue: EventValue { .bool(self) }
}

extension JSONValue: TrackableValueType {
    /// The value itself.
    public var eventValue: EventValue { self }
}
