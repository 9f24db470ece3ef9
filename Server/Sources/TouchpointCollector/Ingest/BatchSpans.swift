import TouchpointCore

/// Where each element of a body's `batch` array lies, so an event is stored as the bytes the
/// client sent instead of being written out again.
///
/// Runs only on bodies `JSONParser` has accepted, so it does not validate; it still checks every
/// bound and answers nil for anything it does not expect, and the caller then writes the events out.
enum BatchSpans {
    /// The byte ranges of the elements of the top-level `batch` array (the last `batch` member,
    /// as the parser keeps), or nil when there is none or the body is not as expected.
    static func elements(in body: UnsafeRawBufferPointer) -> [Range<Int>]? {
        var scanner = StructuralJSONScanner(bytes: body.assumingMemoryBound(to: UInt8.self))
        scanner.skipWhitespace()
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        var batch: Range<Int>?
        scanner.skipWhitespace()
        if scanner.take(UInt8(ascii: "}")) { return nil }
        while true {
            scanner.skipWhitespace()
            let keyStart = scanner.index
            guard scanner.skipString() else { return nil }
            let key = keyStart..<scanner.index
            scanner.skipWhitespace()
            guard scanner.take(UInt8(ascii: ":")) else { return nil }
            scanner.skipWhitespace()
            let valueStart = scanner.index
            guard scanner.skipValue() else { return nil }
            if scanner.isKey(key, "batch") { batch = valueStart..<scanner.index }
            scanner.skipWhitespace()
            if scanner.take(UInt8(ascii: ",")) { continue }
            guard scanner.take(UInt8(ascii: "}")) else { return nil }
            break
        }
        guard let batch else { return nil }
        scanner.index = batch.lowerBound
        guard scanner.take(UInt8(ascii: "[")) else { return nil }
        var elements: [Range<Int>] = []
        scanner.skipWhitespace()
        if scanner.take(UInt8(ascii: "]")) { return elements }
        while true {
            scanner.skipWhitespace()
            let start = scanner.index
            guard scanner.skipValue() else { return nil }
            elements.append(start..<scanner.index)
            scanner.skipWhitespace()
            if scanner.take(UInt8(ascii: ",")) { continue }
            guard scanner.take(UInt8(ascii: "]")) else { return nil }
            return elements
        }
    }
}

// What `BatchSpans` asks of a member name.
extension StructuralJSONScanner {
    /// Whether the string token at `range` (with its quotes) is the key `name`.
    fileprivate func isKey(_ range: Range<Int>, _ name: StaticString) -> Bool {
        let content = (range.lowerBound + 1)..<(range.upperBound - 1)
        if content.count == name.utf8CodeUnitCount {
            let expected = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
            if zip(content, expected).allSatisfy({ bytes[$0] == $1 }) { return true }
        }
        // An escaped key (`"b\u0061tch"`) means the same as the plain one.
        guard bytes[content].contains(UInt8(ascii: "\\")),
            case .string(let decoded)? = try? JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[range]))
        else { return false }
        return decoded == name.description
    }
}
