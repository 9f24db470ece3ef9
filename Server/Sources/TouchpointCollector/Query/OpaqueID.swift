import Foundation

/// An id as a cursor holds it: `~` and the hex of its UTF-8 bytes, so that a cursor the API hands
/// out holds only characters no client encodes or decodes differently (an id such as
/// `ada+tag@example.com`, sent back unescaped, would otherwise come back with a space).
///
/// A cursor handed out before holds the id as it is, without the `~`: ``decode(_:)`` reads both.
enum OpaqueID {
    /// `id` as a cursor holds it.
    static func encode(_ id: String) -> String {
        "~" + id.utf8.map { String(format: "%02x", $0) }.joined()
    }

    /// The id of a cursor's part: the bytes of `~` and hex, or the text as it is (a cursor of the
    /// earlier form); nil for `~` and anything but an even number of hex digits or bytes that are
    /// not UTF-8.
    static func decode(_ text: some StringProtocol) -> String? {
        guard text.first == "~" else { return String(text) }
        let digits = Array(text.utf8.dropFirst())
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hex(digits[index]), let low = hex(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hex(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
