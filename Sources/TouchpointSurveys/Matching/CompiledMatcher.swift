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
///
/// Plain data on purpose (no strings or arrays inside): evaluating a rule copies matchers, and
/// a copy that retained a payload would cost more than the comparison. String operands live in
/// the bucket's side tables, found by ``operand``.
struct CompiledMatcher: Sendable {
    enum Kind: UInt8, Sendable {
        case equalsString, equalsNumber, equalsBool
        case greater, greaterOrEqual, less, lessOrEqual
        case contains, exists
        /// An operand no property can satisfy (built in code with the wrong type).
        case never
    }

    /// Index into the event's looked-up property values.
    let slot: Int
    let kind: Kind
    /// Whether the result is inverted (`ne`, `notContains`, `notExists`).
    let negated: Bool
    /// The numeric operand, or the Boolean one as 0/1.
    let number: Double
    /// For `equalsString`, an index into the bucket's strings; for `contains`, into its needles.
    let operand: Int

    /// Compiles `matcher`, adding its string operand to `strings` or `needles`.
    init(_ matcher: PropertyMatcher, slot: Int, strings: inout [String], needles: inout [Needle]) {
        self.slot = slot
        let value = matcher.value
        var kind = Kind.never
        var number = 0.0
        var operand = 0
        switch matcher.op {
        case .eq, .ne:
            switch value {
            case .string(let text)?:
                kind = .equalsString
                operand = strings.count
                strings.append(text)
            case .bool(let flag)?:
                kind = .equalsBool
                number = flag ? 1 : 0
            default:
                if let operandNumber = value?.doubleValue { (kind, number) = (.equalsNumber, operandNumber) }
            }
        case .gt, .gte, .lt, .lte:
            if let operandNumber = value?.doubleValue {
                number = operandNumber
                kind = [.gt: .greater, .gte: .greaterOrEqual, .lt: .less][matcher.op] ?? .lessOrEqual
            }
        case .contains, .notContains:
            if let text = value?.stringValue {
                kind = .contains
                operand = needles.count
                needles.append(Needle(text))
            }
        case .exists, .notExists:
            kind = .exists
        }
        self.kind = kind
        self.number = number
        self.operand = operand
        negated = matcher.op == .ne || matcher.op == .notContains || matcher.op == .notExists
    }

    @inline(__always)
    func matches(
        _ property: UnsafePointer<JSONValue?>, strings: UnsafeBufferPointer<String>,
        needles: UnsafeBufferPointer<Needle>
    ) -> Bool {
        evaluate(property, strings, needles) != negated
    }

    @inline(__always)
    private func evaluate(
        _ property: UnsafePointer<JSONValue?>, _ strings: UnsafeBufferPointer<String>,
        _ needles: UnsafeBufferPointer<Needle>
    ) -> Bool {
        switch kind {
        case .never: return false
        case .exists: return property.pointee != nil
        case .equalsString:
            if case .string(let actual)? = property.pointee { return actual == strings[operand] }
            return false
        case .equalsBool:
            if case .bool(let actual)? = property.pointee { return actual == (number != 0) }
            return false
        case .contains:
            switch property.pointee {
            case .string(let text)?: return needles[operand].matches(in: text)
            case .array(let elements)?:
                let needle = needles[operand].text
                return elements.contains { element in
                    if case .string(let text) = element { return text == needle }
                    return false
                }
            default: return false
            }
        default:
            let actual: Double
            switch property.pointee {
            case .int(let value)?: actual = Double(value)
            case .double(let value)?: actual = value
            default: return false
            }
            switch kind {
            case .equalsNumber: return actual == number
            case .greater: return actual > number
            case .greaterOrEqual: return actual >= number
            case .less: return actual < number
            default: return actual <= number
            }
        }
    }
}

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
