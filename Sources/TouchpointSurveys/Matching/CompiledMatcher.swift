import TouchpointCore

/// A ``PropertyMatcher`` prepared for the hot path: its operand converted once, its property
/// looked up through a slot shared by every rule on the same event name.
struct CompiledMatcher: Sendable {
    enum Test: Sendable {
        case equalsString(String)
        case equalsNumber(Double)
        case equalsBool(Bool)
        case greater(Double)
        case greaterOrEqual(Double)
        case less(Double)
        case lessOrEqual(Double)
        case contains(String)
        case exists
        /// An operand no property can satisfy (built in code with the wrong type).
        case never
    }

    /// Index into the event's looked-up property values.
    let slot: Int
    let test: Test
    /// Whether the result is inverted (`ne`, `notContains`, `notExists`).
    let negated: Bool

    init(_ matcher: PropertyMatcher, slot: Int) {
        self.slot = slot
        let value = matcher.value
        switch matcher.op {
        case .eq, .ne:
            negated = matcher.op == .ne
            switch value {
            case .string(let text)?: test = .equalsString(text)
            case .bool(let flag)?: test = .equalsBool(flag)
            default: test = value?.doubleValue.map(Test.equalsNumber) ?? .never
            }
        case .gt: (test, negated) = (.greater(value?.doubleValue ?? .nan), false)
        case .gte: (test, negated) = (.greaterOrEqual(value?.doubleValue ?? .nan), false)
        case .lt: (test, negated) = (.less(value?.doubleValue ?? .nan), false)
        case .lte: (test, negated) = (.lessOrEqual(value?.doubleValue ?? .nan), false)
        case .contains, .notContains:
            negated = matcher.op == .notContains
            test = value?.stringValue.map(Test.contains) ?? .never
        case .exists: (test, negated) = (.exists, false)
        case .notExists: (test, negated) = (.exists, true)
        }
    }

    @inline(__always)
    func matches(_ property: JSONValue?) -> Bool {
        evaluate(property) != negated
    }

    @inline(__always)
    private func evaluate(_ property: JSONValue?) -> Bool {
        guard let property else { return false }
        switch test {
        case .exists: return true
        case .never: return false
        case .equalsString(let expected):
            if case .string(let actual) = property { return actual == expected }
            return false
        case .equalsBool(let expected):
            if case .bool(let actual) = property { return actual == expected }
            return false
        case .equalsNumber(let expected): return property.number.map { $0 == expected } ?? false
        case .greater(let bound): return property.number.map { $0 > bound } ?? false
        case .greaterOrEqual(let bound): return property.number.map { $0 >= bound } ?? false
        case .less(let bound): return property.number.map { $0 < bound } ?? false
        case .lessOrEqual(let bound): return property.number.map { $0 <= bound } ?? false
        case .contains(let needle):
            switch property {
            case .string(let text): return needle.isEmpty || text.contains(needle)
            case .array(let elements):
                return elements.contains { element in
                    if case .string(let text) = element { return text == needle }
                    return false
                }
            default: return false
            }
        }
    }
}

extension JSONValue {
    /// The number as a `Double`, for the matcher's hot path.
    @inline(__always)
    fileprivate var number: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }
}
