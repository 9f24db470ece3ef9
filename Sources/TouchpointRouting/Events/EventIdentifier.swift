/// The name of a typed event, following the convention *Object: Action - Label*.
///
/// ```swift
/// EventIdentifier(object: "App", action: "Opened").stringValue                 // "App: Opened"
/// EventIdentifier(object: "Song", action: "Tapped", label: "More Info").stringValue
/// // "Song: Tapped - More Info"
/// ```
///
/// The ``stringValue`` is the event's name in the log and for every adapter; two identifiers
/// are equal when their names are.
public struct EventIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The event's name: `Object: Action`, or `Object: Action - Label` when there is a label.
    public let stringValue: String
    /// The parts given to ``init(object:action:label:)``; nil for ``init(name:)``, which reads
    /// them from the name only when asked (adapters of untyped events rarely ask).
    private let parts: Parts?

    private struct Parts: Sendable {
        let object: String
        let action: String
        let label: String?
    }

    /// Creates an identifier from its parts.
    /// - Parameters:
    ///   - object: what the event is about: `App`, `Song`, `Artist`.
    ///   - action: what happened to it: `Opened`, `Tapped`, `Viewed`.
    ///   - label: an optional detail: `More Info`.
    public init(object: String, action: String, label: String? = nil) {
        parts = Parts(object: object, action: action, label: label)
        if let label {
            stringValue = "\(object): \(action) - \(label)"
        } else {
            stringValue = "\(object): \(action)"
        }
    }

    /// Creates an identifier for an event name as recorded, such as `checkout_success` or
    /// `App: Opened`; ``stringValue`` is always `name` exactly.
    ///
    /// A name following the convention reads as its parts; any other name is the ``object``,
    /// with an empty ``action``.
    public init(name: String) {
        stringValue = name
        parts = nil
    }

    /// What the event is about: `App`, `Song`, `Artist`.
    public var object: String { resolvedParts.object }
    /// What happened to it: `Opened`, `Tapped`, `Viewed`.
    public var action: String { resolvedParts.action }
    /// An optional detail: `More Info`.
    public var label: String? { resolvedParts.label }

    public var description: String { stringValue }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.stringValue == rhs.stringValue }

    public func hash(into hasher: inout Hasher) { hasher.combine(stringValue) }

    private var resolvedParts: Parts {
        if let parts { return parts }
        let name = stringValue
        guard let colon = Self.find(": ", in: name[...]) else { return Parts(object: name, action: "", label: nil) }
        let object = String(name[..<colon.lowerBound])
        let rest = name[colon.upperBound...]
        guard let dash = Self.find(" - ", in: rest) else {
            return Parts(object: object, action: String(rest), label: nil)
        }
        return Parts(object: object, action: String(rest[..<dash.lowerBound]), label: String(rest[dash.upperBound...]))
    }

    /// The first occurrence of an ASCII `separator` in `text`.
    private static func find(_ separator: String, in text: Substring) -> Range<String.Index>? {
        let pattern = Array(separator.utf8)
        let utf8 = text.utf8
        var start = utf8.startIndex
        while start != utf8.endIndex {
            var probe = start
            var matched = 0
            while matched < pattern.count, probe != utf8.endIndex, utf8[probe] == pattern[matched] {
                matched += 1
                probe = utf8.index(after: probe)
            }
            if matched == pattern.count { return start..<probe }
            start = utf8.index(after: start)
        }
        return nil
    }
}
