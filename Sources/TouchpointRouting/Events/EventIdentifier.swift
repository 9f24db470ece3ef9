import Foundation

/// The name of a typed event, following the convention *Object: Action - Label*.
///
/// ```swift
/// EventIdentifier(object: "App", action: "Opened").stringValue                 // "App: Opened"
/// EventIdentifier(object: "Song", action: "Tapped", label: "More Info").stringValue
/// // "Song: Tapped - More Info"
/// ```
///
/// The ``stringValue`` is the event's name in the log and for every adapter.
public struct EventIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// What the event is about: `App`, `Song`, `Artist`.
    public let object: String
    /// What happened to it: `Opened`, `Tapped`, `Viewed`.
    public let action: String
    /// An optional detail: `More Info`.
    public let label: String?
    /// The event's name: `Object: Action`, or `Object: Action - Label` when there is a label.
    public let stringValue: String

    /// Creates an identifier from its parts.
    /// - Parameters:
    ///   - object: what the event is about.
    ///   - action: what happened to it.
    ///   - label: an optional detail.
    public init(object: String, action: String, label: String? = nil) {
        self.object = object
        self.action = action
        self.label = label
        if let label {
            stringValue = "\(object): \(action) - \(label)"
        } else {
            stringValue = "\(object): \(action)"
        }
    }

    /// Creates an identifier for an event name as recorded, such as `checkout_success` or
    /// `App: Opened`; ``stringValue`` is always `name` exactly.
    ///
    /// A name following the convention is split into its parts; any other name becomes the
    /// ``object`` with an empty ``action``.
    public init(name: String) {
        stringValue = name
        guard let colon = name.range(of: ": ") else {
            object = name
            action = ""
            label = nil
            return
        }
        object = String(name[..<colon.lowerBound])
        let rest = name[colon.upperBound...]
        if let dash = rest.range(of: " - ") {
            action = String(rest[..<dash.lowerBound])
            label = String(rest[dash.upperBound...])
        } else {
            action = String(rest)
            label = nil
        }
    }

    public var description: String { stringValue }
}
