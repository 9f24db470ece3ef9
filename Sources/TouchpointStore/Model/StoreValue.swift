/// A value in the scenario store: JSON, plus colors and URLs.
///
/// Integers and fractional numbers are distinct cases (`.integer(1)` is not `.number(1)`), and
/// every case survives a trip through JSON as itself; see ``StoreValue/jsonValue`` for how colors
/// and URLs are tagged.
///
/// ```swift
/// let item: StoreValue = .object([
///     "title": .string("Socks"),
///     "price": .number(4.5),
///     "quantity": .integer(2),
///     "swatch": .color("#1E90FF"),
///     "link": .url("https://acme.example/socks"),
/// ])
/// ```
public enum StoreValue: Sendable, Hashable {
    /// Text.
    case string(String)
    /// A floating-point number.
    case number(Double)
    /// A whole number.
    case integer(Int)
    /// `true` or `false`.
    case bool(Bool)
    /// A color as text, conventionally `#RRGGBB` or `#RRGGBBAA` (see ``ValidationRule/Kind/color``).
    case color(String)
    /// A URL as text.
    case url(String)
    /// An ordered list.
    case array([StoreValue])
    /// A map from keys to values.
    case object([String: StoreValue])
    /// An explicit null (a present key whose value is null; an absent key is `nil`).
    case null
}

extension StoreValue {
    /// The name of this value's case, for messages: `"string"`, `"number"`, `"integer"`, ….
    public var kindName: String {
        switch self {
        case .string: return "string"
        case .number: return "number"
        case .integer: return "integer"
        case .bool: return "bool"
        case .color: return "color"
        case .url: return "url"
        case .array: return "array"
        case .object: return "object"
        case .null: return "null"
        }
    }

    /// The members, when this is `.object`.
    public var objectValue: [String: StoreValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The elements, when this is `.array`.
    public var arrayValue: [StoreValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The number as a `Double`, when this is `.number` or `.integer`.
    public var doubleValue: Double? {
        switch self {
        case .number(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }

    /// The text of `.string`, `.color` and `.url`.
    public var stringValue: String? {
        switch self {
        case .string(let text), .color(let text), .url(let text): return text
        default: return nil
        }
    }
}
