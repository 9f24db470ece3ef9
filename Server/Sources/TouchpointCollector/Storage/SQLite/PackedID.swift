/// An event's message or session id, and a session's id, as SQLite keeps them: the 16 bytes of the
/// UUID it spells, when it spells one exactly, instead of its 36 characters.
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
/// message key (``MessageKey``) is always that of the text. A session is found by its id as
/// stored: bound with `SQLValue.id` or `SQLiteStatement.bind(id:_:)`. PostgreSQL keeps ids as text.
enum PackedID {
    /// The last byte of a packed uppercase id.
    static let uppercase: UInt8 = 0x55

    /// The longest packed id.
    static let maximumCount = 17

    /// The blob for `id`, or nil when it is not a UUID in canonical form of one case.
    static func pack(_ id: String) -> [UInt8]? {
        Bytes(id)?.withBytes { Array($0) }
    }

    /// A packed id held in place (no allocation), so that it can be worked out on a request's
    /// task and bound by the writer as it is.
    struct Bytes: Sendable, Equatable {
        private var storage: (UInt64, UInt64, UInt64) = (0, 0, 0)
        /// How many of the bytes are the id's (16 or 17).
        private(set) var count = 0

        /// The packed form of `id`, or nil when it is not a UUID in canonical form of one case.
        init?(_ id: String) {
            var id = id
            var storage = self.storage
            let count = id.withUTF8 { text in
                withUnsafeMutableBytes(of: &storage) { raw in pack(text, into: raw.bindMemory(to: UInt8.self)) }
            }
            guard let count else { return nil }
            self.storage = storage
            self.count = count
        }

        /// Calls `body` with the packed bytes.
        func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
            try withUnsafeBytes(of: storage) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
        }

        static func == (lhs: Bytes, rhs: Bytes) -> Bool {
            lhs.withBytes { left in rhs.withBytes { right in left.elementsEqual(right) } }
        }
    }

    /// Packs the UTF-8 `text` into `bytes` (at least ``maximumCount`` of them), without allocating
    /// (a request's task packs an event's two ids, ``Bytes``).
    /// - Returns: how many bytes the packed id has, or nil when `text` is not a UUID in canonical
    ///   form of one case.
    static func pack(_ text: UnsafeBufferPointer<UInt8>, into bytes: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        guard text.count == 36, bytes.count >= maximumCount else { return nil }
        var letters: UInt8 = 0  // 1: a lowercase letter seen, 2: an uppercase one
        var output = 0
        var position = 0
        while position < 36 {
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard text[position] == UInt8(ascii: "-") else { return nil }
                position += 1
                continue
            }
            guard let high = digit(text[position], &letters), let low = digit(text[position + 1], &letters) else {
                return nil
            }
            bytes[output] = high << 4 | low
            output += 1
            position += 2
        }
        switch letters {
        case 3: return nil
        case 2:
            bytes[16] = uppercase
            return 17
        default: return 16
        }
    }

    /// The value of a hex digit, noting in `letters` the case of a letter.
    private static func digit(_ character: UInt8, _ letters: inout UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"):
            letters |= 1
            return character &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"):
            letters |= 2
            return character &- UInt8(ascii: "A") &+ 10
        default: return nil
        }
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
