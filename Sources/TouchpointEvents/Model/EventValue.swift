@_exported import TouchpointCore

/// A property value on an event: `.string`, `.int`, `.double`, `.bool`, and also arrays, objects
/// and `.null`, encoded as plain JSON.
///
/// It is Touchpoint's one JSON value type, ``JSONValue``, under the name the event API uses.
///
/// ```swift
/// EventRecorder.shared.record("button_tap", properties: [
///     "screen": .string("Home"),
///     "count": .int(1),
///     "success": .bool(true),
/// ])
/// ```
public typealias EventValue = JSONValue
