/// An event's message or session id as SQLite keeps it: the 16 bytes of the UUID it spells, when
/// it spells one exactly, instead of its 36 characters.
///
/// Nearly every SDK makes its message ids, and most their session ids, as UUIDs: lowercase
/// (analytics.js, the Python, Node and Kotlin libraries) or uppercase (Apple's `uuidString`).
/// Kept as text they were 72 of an event row's bytes. Only the canonical form packs — 8-4-4-4-12
/// hex digits, the letters all lowercase or all uppercase — so that unpacking gives back exactly
/// the text received; any other id (mixed case, braces, a different length) stays text. A packed
/// id is a blob: 16 bytes for the lowercase form, and a 17th, ``uppercase``, for the uppercase one.
///
/// The collector's SQLite connection reads a blob column as the id it packs
/// (`SQLiteStatement.row()`), and SQL reaches the text through `touchpoint_id(column)`; the
/// message key (``MessageKey``) is always that of the text. PostgreSQL keeps ids as text.
enum PackedID {
    /// The last byte of a packed uppercase id.
    static let uppercase: UInt8 = 0x55

    /// The blob for `id`, or nil when it is not a UUID in canonical form of one case.
    static func pack(_ id: String) -> [UInt8]? {
        var id = id
        return id.withUTF8(pack)
    }

    /// The blob for the UTF-8 `text`, or nil when it is not a UUID in canonical form of one case.
    static func pack(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count == 36 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 16)
        var lower = false
        var upper = false
        var index = 0
        for position in 0..<36 {
            let character = text[position]
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            let digit: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = character &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"):
                digit = character &- UInt8(ascii: "a") &+ 10
                lower = true
            case UInt8(ascii: "A")...UInt8(ascii: "F"):
                digit = character &- UInt8(ascii: "A") &+ 10
                upper = true
            default: return nil
            }
            bytes[index >> 1] |= index & 1 == 0 ? digit << 4 : digit
            index += 1
        }
        if lower && upper { return nil }
        if upper { bytes.append(uppercase) }
        return bytes
    }

    /// The id a blob packs, or nil when `bytes` is not a packed id.
    static func unpack(_ bytes: UnsafeRawBufferPointer) -> String? {
        let digits: StaticString
        switch bytes.count {
        case 16: digits = "0123456789abcdef"
        case 17 where bytes[16] == uppercase: digits = "0123456789ABCDEF"
        default: return nil
        }
        return String(unsafeUninitializedCapacity: 36) { text in
            var position = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                text[position] = digits.utf8Start[Int(bytes[index] >> 4)]
                text[position + 1] = digits.utf8Start[Int(bytes[index] & 0x0F)]
                position += 2
            }
            return position
        }
    }

    /// The id a blob packs, or nil when `bytes` is not a packed id.
    static func unpack(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes(unpack)
    }
}
