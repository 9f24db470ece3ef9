import TouchpointCore

/// Converting to and from the foundation's ``JSONValue``.
///
/// The encoding is plain JSON except for four reserved one-member objects, so that every case
/// reads back as itself:
///
/// | value | JSON |
/// | --- | --- |
/// | `.integer(1)` | `1` |
/// | `.number(1)` | `1.0` (the writer always writes a fraction or exponent for a double) |
/// | `.number(.infinity)` | `{"$number":"inf"}` (also `"-inf"`, `"nan"`; JSON has no such numbers) |
/// | `.color("#FF0000")` | `{"$color":"#FF0000"}` |
/// | `.url("https://a.example")` | `{"$url":"https://a.example"}` |
/// | `.object(["$url": x])` | `{"$object":{"$url":x}}` (an object that would read as a tag is wrapped) |
///
/// Any other JSON object, including one with a reserved key and other members, is an object.
extension StoreValue {
    /// The reserved keys of the tagged encoding.
    enum Tag {
        static let color = "$color"
        static let url = "$url"
        static let number = "$number"
        static let object = "$object"

        static func isReserved(_ key: String) -> Bool {
            key == color || key == url || key == number || key == object
        }
    }

    /// Reads a value from JSON written by ``jsonValue`` (or any plain JSON).
    /// - Parameter json: the JSON value; every JSON value maps to a store value.
    public init(json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .int(let number): self = .integer(number)
        case .double(let number): self = .number(number)
        case .string(let text): self = .string(text)
        case .array(let elements): self = .array(elements.map(StoreValue.init(json:)))
        case .object(let members):
            if members.count == 1, let (key, payload) = members.first, let tagged = Self.untag(key, payload) {
                self = tagged
            } else {
                self = .object(members.mapValues(StoreValue.init(json:)))
            }
        }
    }

    private static func untag(_ key: String, _ payload: JSONValue) -> StoreValue? {
        switch (key, payload) {
        case (Tag.color, .string(let text)): return .color(text)
        case (Tag.url, .string(let text)): return .url(text)
        case (Tag.number, .string("inf")): return .number(.infinity)
        case (Tag.number, .string("-inf")): return .number(-.infinity)
        case (Tag.number, .string("nan")): return .number(.nan)
        case (Tag.number, .double(let number)): return .number(number)
        case (Tag.number, .int(let number)): return .number(Double(number))
        case (Tag.object, .object(let members)): return .object(members.mapValues(StoreValue.init(json:)))
        default: return nil
        }
    }

    /// This value as JSON that ``init(json:)`` reads back as the same case (see the table above).
    public var jsonValue: JSONValue { tagged(integralNumbers: false) }

    /// The tagged form; `integralNumbers` also tags whole doubles such as `1.0`, for encoders whose
    /// decoders cannot tell `1.0` from `1` (Foundation's `JSONDecoder` reads both as an `Int`).
    func tagged(integralNumbers: Bool) -> JSONValue {
        switch self {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .integer(let number): return .int(number)
        case .number(let number):
            if number.isNaN { return [Tag.number: "nan"] }
            if number.isInfinite { return [Tag.number: number > 0 ? "inf" : "-inf"] }
            if integralNumbers && number.rounded() == number { return [Tag.number: .double(number)] }
            return .double(number)
        case .string(let text): return .string(text)
        case .color(let text): return [Tag.color: .string(text)]
        case .url(let text): return [Tag.url: .string(text)]
        case .array(let elements): return .array(elements.map { $0.tagged(integralNumbers: integralNumbers) })
        case .object(let members):
            let json = JSONValue.object(members.mapValues { $0.tagged(integralNumbers: integralNumbers) })
            if members.count == 1, let key = members.keys.first, Tag.isReserved(key) { return [Tag.object: json] }
            return json
        }
    }

    /// This value as plain JSON for decoding into app types: colors and URLs become strings and
    /// non-finite numbers `null`. It does not read back as the same value; ``jsonValue`` does.
    public var plainJSONValue: JSONValue {
        switch self {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .integer(let number): return .int(number)
        case .number(let number): return number.isFinite ? .double(number) : .null
        case .string(let text), .color(let text), .url(let text): return .string(text)
        case .array(let elements): return .array(elements.map(\.plainJSONValue))
        case .object(let members): return .object(members.mapValues(\.plainJSONValue))
        }
    }

    /// Parses JSON text written by ``jsonString(sortedKeys:)`` (or any JSON text).
    /// - Parameter jsonText: one JSON value.
    /// - Throws: ``JSONParseError`` naming the byte where the text is not JSON.
    public init(jsonText: String) throws(JSONParseError) {
        self.init(json: try JSONParser.parse(jsonText))
    }

    /// This value as compact JSON text that ``init(jsonText:)`` reads back as the same value.
    /// - Parameter sortedKeys: whether object keys are written in sorted order (stable output).
    public func jsonString(sortedKeys: Bool = false) -> String {
        jsonValue.jsonString(sortedKeys: sortedKeys)
    }
}
