/// A forward-only reader over JSON bytes for callers that need a few members of a large document.
///
/// It checks every byte it moves over exactly as ``JSONParser`` does (the same grammar, UTF-8
/// rules, ``JSONParser/maximumDepth`` and error messages), so a document the cursor walks to its
/// end without an error is one the parser accepts; but it builds a ``JSONValue`` only where asked to
/// (``readValue(depth:)``) and only looks at the rest (``skipValue(depth:)``).
///
/// `depth` is the nesting depth of the container the value sits in: 0 for the document itself,
/// 1 for a member of the top-level object, and so on, as in the parser.
public struct JSONCursor {
    private var scanner: JSONScanner

    /// A cursor at the start of `bytes`.
    public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        scanner = JSONScanner(bytes)
    }

    /// The byte offset of the next byte to read.
    public var offset: Int { scanner.index }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { scanner.index >= scanner.bytes.count }

    /// The next byte, or nil at the end.
    public var next: UInt8? { scanner.index < scanner.bytes.count ? scanner.bytes[scanner.index] : nil }

    /// Moves past spaces, tabs and line breaks.
    public mutating func skipWhitespace() {
        scanner.skipWhitespace()
    }

    /// Moves past `byte` when it is next (no whitespace skipped).
    /// - Returns: whether it was there.
    public mutating func take(_ byte: UInt8) -> Bool {
        guard scanner.index < scanner.bytes.count, scanner.bytes[scanner.index] == byte else { return false }
        scanner.index += 1
        return true
    }

    /// Reads an object key (a string) and the `:` after it, with whitespace around it.
    /// - Returns: the key's bytes between its quotes, or nil when they hold an escape sequence
    ///   (the key is still checked and read past).
    public mutating func readKey() throws(JSONParseError) -> UnsafeBufferPointer<UInt8>? {
        scanner.skipWhitespace()
        guard scanner.index < scanner.bytes.count, scanner.bytes[scanner.index] == UInt8(ascii: "\"") else {
            throw scanner.error(
                scanner.index < scanner.bytes.count ? "expected a string key" : "unexpected end of input in an object")
        }
        let start = scanner.index + 1
        let plain = try scanner.skipString()
        let key = plain ? UnsafeBufferPointer(rebasing: scanner.bytes[start..<(scanner.index - 1)]) : nil
        scanner.skipWhitespace()
        guard take(UInt8(ascii: ":")) else { throw scanner.error("expected ':' after a key") }
        scanner.skipWhitespace()
        return key
    }

    /// Reads the value that starts here into a ``JSONValue``.
    public mutating func readValue(depth: Int) throws(JSONParseError) -> JSONValue {
        try scanner.parseValue(depth: depth)
    }

    /// Checks the value that starts here and moves past it.
    /// - Returns: the byte range it occupied.
    @discardableResult
    public mutating func skipValue(depth: Int) throws(JSONParseError) -> Range<Int> {
        let start = scanner.index
        try scanner.skipValue(depth: depth)
        return start..<scanner.index
    }

    /// Moves past the `,` or closing `close` that follows a member or element, with the
    /// whitespace before it.
    /// - Returns: true after a `,` (another member follows), false after `close`.
    public mutating func endOfMember(close: UInt8) throws(JSONParseError) -> Bool {
        scanner.skipWhitespace()
        guard scanner.index < scanner.bytes.count else {
            throw scanner.error(
                close == UInt8(ascii: "}")
                    ? "unexpected end of input in an object" : "unexpected end of input in an array")
        }
        if take(UInt8(ascii: ",")) { return true }
        if take(close) { return false }
        throw scanner.error(close == UInt8(ascii: "}") ? "expected ',' or '}'" : "expected ',' or ']'")
    }

    /// Whether `key` is `name`, byte for byte.
    public static func key(_ key: UnsafeBufferPointer<UInt8>, is name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard key.count == count else { return false }
        let expected = name.utf8Start
        for offset in 0..<count where key[offset] != expected[offset] { return false }
        return true
    }
}

extension JSONScanner {
    /// Checks the value at `index` as ``parseValue(depth:)`` would and moves past it, without
    /// building it.
    mutating func skipValue(depth: Int) throws(JSONParseError) {
        guard index < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): try skipContainer(close: UInt8(ascii: "}"), depth: depth + 1)
        case UInt8(ascii: "["): try skipContainer(close: UInt8(ascii: "]"), depth: depth + 1)
        case UInt8(ascii: "\""): _ = try skipString()
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        // The parser's own number reader: its range check (an out-of-range double) is part of
        // what it accepts. It allocates only for numbers that are not integers.
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
        default: throw error("unexpected character \(describe(bytes[index])), expected a value")
        }
    }

    /// An object (`close` = `}`) or array (`]`) at `index`, checked as the parser checks it.
    private mutating func skipContainer(close: UInt8, depth: Int) throws(JSONParseError) {
        guard depth <= JSONParser.maximumDepth else { throw error("nesting deeper than \(JSONParser.maximumDepth)") }
        let isObject = close == UInt8(ascii: "}")
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == close {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            if isObject {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw error(index < bytes.count ? "expected a string key" : "unexpected end of input in an object")
                }
                _ = try skipString()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                    throw error("expected ':' after a key")
                }
                index += 1
                skipWhitespace()
            }
            try skipValue(depth: depth)
            skipWhitespace()
            guard index < bytes.count else {
                throw error(isObject ? "unexpected end of input in an object" : "unexpected end of input in an array")
            }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case close:
                index += 1
                return
            default: throw error(isObject ? "expected ',' or '}'" : "expected ',' or ']'")
            }
        }
    }

    /// Checks the string at `index` as ``parseString()`` would and moves past it.
    /// - Returns: true when it held no escape sequence.
    mutating func skipString() throws(JSONParseError) -> Bool {
        let quote = index
        index += 1
        let start = index
        // Eight bytes at a time while none of them needs a look: most strings are plain ASCII.
        if let base = bytes.baseAddress {
            while index + 8 <= bytes.count,
                !Self.needsLook(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            {
                index += 8
            }
        }
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                if !ascii { try validateUTF8(UnsafeBufferPointer(rebasing: bytes[start..<index]), offset: start) }
                index += 1
                return true
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character \(describe(byte)) in a string; escape it") }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        // Escapes (or the end of the input): the parser's own reader checks them.
        index = quote
        _ = try parseString()
        return false
    }

    /// Whether any of the eight bytes in `word` is a quote, a backslash, a control character or
    /// not ASCII (each test leaves some high bit set exactly when some byte matches).
    static func needsLook(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let isQuote = (quotes &- ones) & ~quotes
        let isBackslash = (backslashes &- ones) & ~backslashes
        let isControl = (word &- ones &* 0x20) & ~word
        return (isQuote | isBackslash | isControl | word) & (ones &* 0x80) != 0
    }
}
