/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Names keep the spelling they were added with (so a server's log shows what was sent), but
/// every lookup ignores case, as HTTP requires.
///
/// ```swift
/// var headers: TransportHeaders = ["Content-Type": "application/json"]
/// headers["if-none-match"] = "\"v3\""
/// headers["CONTENT-TYPE"]  // "application/json"
/// ```
public struct TransportHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The field name, as given.
        public var name: String
        /// The field value.
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in the order they were added.
    public private(set) var fields: [Field]

    /// Creates headers from fields, keeping their order.
    public init(_ fields: [Field] = []) { self.fields = fields }

    /// Creates headers from name–value pairs, keeping their order.
    public init(_ pairs: [(String, String)]) { fields = pairs.map { Field(name: $0.0, value: $0.1) } }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The first value of the field called `name` (any case), or nil.
    ///
    /// Setting a value replaces every field of that name with one field; setting nil removes them.
    public subscript(name: String) -> String? {
        get { fields.first { Self.equalNames($0.name, name) }?.value }
        set {
            if let newValue {
                replaceOrAdd(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
    }

    /// Every value of the field called `name` (any case), in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.equalNames($0.name, name) }.map(\.value)
    }

    /// Whether a field called `name` (any case) is present.
    public func contains(_ name: String) -> Bool { fields.contains { Self.equalNames($0.name, name) } }

    /// Appends a field, keeping any existing field of the same name.
    public mutating func add(name: String, value: String) { fields.append(Field(name: name, value: value)) }

    /// Replaces every field called `name` with one field holding `value`, or appends it.
    public mutating func replaceOrAdd(name: String, value: String) {
        if let first = fields.firstIndex(where: { Self.equalNames($0.name, name) }) {
            fields[first] = Field(name: name, value: value)
            var index = first + 1
            while index < fields.count {
                if Self.equalNames(fields[index].name, name) { fields.remove(at: index) } else { index += 1 }
            }
        } else {
            fields.append(Field(name: name, value: value))
        }
    }

    /// Removes every field called `name` (any case).
    public mutating func remove(name: String) { fields.removeAll { Self.equalNames($0.name, name) } }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The fields as `Name: value` lines.
    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }

    /// Compares two field names the way HTTP does: ASCII case-insensitively.
    static func equalNames(_ left: String, _ right: String) -> Bool {
        let leftBytes = left.utf8
        let rightBytes = right.utf8
        guard leftBytes.count == rightBytes.count else { return false }
        return zip(leftBytes, rightBytes).allSatisfy { lowercase($0) == lowercase($1) }
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) ? byte + 32 : byte
    }
}
