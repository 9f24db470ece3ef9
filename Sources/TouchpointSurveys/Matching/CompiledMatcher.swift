import TouchpointCore

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

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
        case contains(Needle)
        case exists
        /// A `contains` operand, with its UTF-8 bytes kept for a fast search.
    struct Needle: Sendable {
        let text: String
        let bytes: [UInt8]
        /// ASCII without CR or LF: a needle whose characters are single bytes that never join
        /// a neighbour into one character, so a byte search decides for it (see `matches`).
        let isPlainASCII: Bool

        init(_ text: String) {
            self.text = text
            bytes = Array(text.utf8)
            isPlainASCII = bytes.allSatisfy { $0 < 0x80 && $0 != 0x0A && $0 != 0x0D }
        }

        /// Whether `haystack` contains the operand, comparing characters as `String` does.
        ///
        /// For a plain-ASCII needle a character match implies a byte match, so no byte match
        /// means no; a byte match in an ASCII haystack means yes. Only a byte match in a
        /// haystack with other characters (which may join the match's edges into one
        /// character, as `e` + U+0301 does) asks the generic search.
        func matches(in haystack: String) -> Bool {
            if bytes.isEmpty { return true }
            guard isPlainASCII else { return haystack.contains(text) }
            let answer = haystack.utf8.withContiguousStorageIfAvailable { hay -> Bool? in
                guard Self.search(hay, for: bytes) else { return false }
                return hay.allSatisfy({ $0 < 0x80 }) ? true : nil
            }
            if let answer = answer ?? nil { return answer }
            return haystack.contains(text)
        }

        /// A byte search: `memchr` finds each candidate first byte, `memcmp` checks the rest.
        private static func search(_ hay: UnsafeBufferPointer<UInt8>, for needle: [UInt8]) -> Bool {
            guard var start = hay.baseAddress, needle.count <= hay.count else { return false }
            var remaining = hay.count
            let first = Int32(needle[0])
            return needle.withUnsafeBytes { needle in
                guard let needleStart = needle.baseAddress else { return false }
                while remaining >= needle.count {
                    guard let hit = memchr(start, first, remaining - needle.count + 1) else { return false }
                    let candidate = UnsafePointer(hit.assumingMemoryBound(to: UInt8.self))
                    if memcmp(candidate, needleStart, needle.count) == 0 { return true }
                    let skipped = candidate - start + 1
                    start += skipped
                    remaining -= skipped
                }
                return false
            }
        }
    }

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
            test = value?.stringValue.map { .contains(Test.Needle($0)) } ?? .never
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
            case .string(let text): return needle.matches(in: text)
            case .array(let elements):
                return elements.contains { element in
                    if case .string(let text) = element { return text == needle.text }
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
