extension StoreValue: ExpressibleByStringLiteral {
    /// A `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension StoreValue: ExpressibleByIntegerLiteral {
    /// An `.integer`.
    public init(integerLiteral value: Int) { self = .integer(value) }
}

extension StoreValue: ExpressibleByFloatLiteral {
    /// A `.number`.
    public init(floatLiteral value: Double) { self = .number(value) }
}

extension StoreValue: ExpressibleByBooleanLiteral {
    /// A `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension StoreValue: ExpressibleByArrayLiteral {
    /// An `.array`.
    public init(arrayLiteral elements: StoreValue...) { self = .array(elements) }
}

extension StoreValue: ExpressibleByDictionaryLiteral {
    /// An `.object`; a key given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, StoreValue)...) {
        var members: [String: StoreValue] = [:]
        members.reserveCapacity(elements.count)
        for (key, value) in elements { members[key] = value }
        self = .object(members)
    }
}
