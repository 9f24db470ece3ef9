/// Moves over JSON that was checked before (by `JSONParser` or `JSONCursor`, or written by the
/// collector) by its structure alone: quotes, escapes and brackets, without checking it again.
///
/// It checks every bound: bytes that are not JSON make a move answer false, never read out of
/// bounds. Used where a checked body is read a second time (``BatchSpans``, ``StoredPayload``).
struct StructuralJSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    /// Whether the last string ``skipString()`` moved past had no escape.
    private(set) var lastStringWasPlain = true

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func skipWhitespace() {
        while index < bytes.count,
            bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
        {
            index += 1
        }
    }

    /// Moves past `byte` when it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Moves past a string starting at `index`, noting in ``lastStringWasPlain`` whether it had
    /// an escape.
    mutating func skipString() -> Bool {
        guard take(UInt8(ascii: "\"")) else { return false }
        var plain = true
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                lastStringWasPlain = plain
                return true
            case UInt8(ascii: "\\"):
                plain = false
                index += 2
            default:
                index += 1
            }
        }
        return false
    }

    /// Moves past one value starting at `index`.
    mutating func skipValue() -> Bool {
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            // Brackets counted, strings skipped whole (a bracket in a string is text).
            var depth = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard skipString() else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        index += 1
                        return true
                    }
                default:
                    break
                }
                index += 1
            }
            return false
        default:
            // A number or a literal: up to the next delimiter.
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09:
                    return index > start
                default:
                    index += 1
                }
            }
            return index > start
        }
    }
}
