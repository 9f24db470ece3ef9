import Foundation

extension UUID {
    /// Appends the UUID's canonical text (`uuidString`, uppercase) to a byte buffer without
    /// building an intermediate `String`.
    public func appendString(to bytes: inout [UInt8]) {
        withUnsafeBytes(of: uuid) { raw in
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
                let byte = raw[index]
                bytes.append(Self.hexDigit(byte >> 4))
                bytes.append(Self.hexDigit(byte & 0x0F))
            }
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }
}

extension UUID {
    /// Parses the canonical text form (`8-4-4-4-12` hex digits, either case) without Foundation's
    /// `UUID(uuidString:)`, which scans with `sscanf` on Linux and dominates reading a log.
    /// - Returns: the UUID, or nil when `text` is not exactly that form.
    public static func parse(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { utf8 -> UUID? in
            guard utf8.count == 36 else { return nil }
            var bytes: (UInt64, UInt64) = (0, 0)
            let valid = withUnsafeMutableBytes(of: &bytes) { raw -> Bool in
                var input = 0
                for output in 0..<16 {
                    if input == 8 || input == 13 || input == 18 || input == 23 {
                        guard utf8[input] == UInt8(ascii: "-") else { return false }
                        input += 1
                    }
                    guard let high = hexValue(utf8[input]), let low = hexValue(utf8[input + 1]) else { return false }
                    raw[output] = high << 4 | low
                    input += 2
                }
                return true
            }
            guard valid else { return nil }
            return withUnsafeBytes(of: bytes) { raw in
                UUID(
                    uuid: (
                        raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                        raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]
                    ))
            }
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
