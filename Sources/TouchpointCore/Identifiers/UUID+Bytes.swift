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
