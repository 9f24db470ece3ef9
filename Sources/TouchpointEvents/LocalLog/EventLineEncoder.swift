import Foundation

// `Writer.uuid(_:)` stores digits a word at a time in little-endian order.
#if _endian(big)
#error("EventLineEncoder assumes a little-endian machine")
#endif

/// Encodes events as lines of `events.jsonl` on the record path, byte for byte as
/// ``Event/jsonLine()`` writes them, at a fraction of the cost.
///
/// The bytes go into one buffer the recorder reuses under its lock, with a capacity check per
/// field instead of per byte; what is the same for many events is written once and copied: the
/// session's ids (``SessionSink``'s line tail) and the date and time of the current second.
final class EventLineEncoder {
    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    /// The bytes of the line encoded last.
    private(set) var count = 0
    /// `YYYY-MM-DDTHH:MM:SS.` of `cachedSecond`.
    private var secondPrefix = [UInt8](repeating: 0, count: 20)
    private var cachedSecond = Int64.min

    init(capacity: Int = 1024) {
        self.capacity = capacity
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
    }

    deinit { buffer.deallocate() }

    /// The line encoded last, valid until the next encoding.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: buffer, count: count) }

    /// Encodes one event's line, newline included.
    /// - Parameters:
    ///   - tail: the session's ``SessionSink/lineTail(anonymousId:)``: from the `sessionId` member
    ///     to the `properties` key.
    func encode(
        id: UUID, type: EventType, name: String, milliseconds: Int64, tail: [UInt8],
        properties: [String: EventValue]
    ) {
        // The work happens on a local copy of the buffer's state: no exclusivity checks of a
        // class's stored properties per byte written.
        var writer = Writer(buffer: buffer, capacity: capacity)
        writer.raw(#"{"messageId":""#)
        writer.uuid(id)
        switch type {
        case .track: writer.raw(#"","type":"track","name":"#)
        case .identify: writer.raw(#"","type":"identify","name":"#)
        case .screen: writer.raw(#"","type":"screen","name":"#)
        default:
            writer.raw(#"","type":"#)
            writer.quoted(type.rawValue)
            writer.raw(#","name":"#)
        }
        writer.quoted(name)
        writer.raw(#","timestamp":""#)
        timestamp(milliseconds, &writer)
        writer.raw("\"")
        tail.withUnsafeBytes { writer.append($0) }
        writer.object(properties)
        writer.raw("}\n")
        buffer = writer.buffer
        capacity = writer.capacity
        count = writer.count
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, as ``Timestamp/format(_:)`` writes it.
    private func timestamp(_ milliseconds: Int64, _ writer: inout Writer) {
        var second = milliseconds / 1000
        var millisecond = milliseconds % 1000
        if millisecond < 0 {
            second -= 1
            millisecond += 1000
        }
        if second != cachedSecond {
            var text: [UInt8] = []
            text.reserveCapacity(24)
            Timestamp.append(Timestamp.date(milliseconds: second * 1000), to: &text)
            secondPrefix = Array(text.prefix(20))
            cachedSecond = second
        }
        secondPrefix.withUnsafeBytes { writer.append($0) }
        let digits = Int(millisecond)
        writer.reserve(4)
        writer.put(UInt8(ascii: "0") &+ UInt8(digits / 100))
        writer.put(UInt8(ascii: "0") &+ UInt8(digits / 10 % 10))
        writer.put(UInt8(ascii: "0") &+ UInt8(digits % 10))
        writer.put(UInt8(ascii: "Z"))
    }

    // MARK: Pieces

    /// Bytes of the session's ids for ``encode(id:type:name:milliseconds:tail:properties:)``:
    /// `,"sessionId":"…","userId":"…","anonymousId":"…","properties":`.
    static func tail(sessionId: UUID, userId: String?, anonymousId: String) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.key("x")
        writer.null()
        writer.sessionMembers(sessionId: sessionId, userId: userId, anonymousId: anonymousId)
        // `{"x":null` → the rest, which starts with the comma after the message's timestamp.
        return Array(writer.bytes.dropFirst(9))
    }
}

extension EventLineEncoder {
    /// The bytes of a line being encoded: a buffer, its capacity and how much of it is written.
    struct Writer {
        var buffer: UnsafeMutableRawPointer
        var capacity: Int
        var count = 0

        init(buffer: UnsafeMutableRawPointer, capacity: Int) {
            self.buffer = buffer
            self.capacity = capacity
        }

        @inline(__always)
        mutating func put(_ value: UInt8) {
            buffer.storeBytes(of: value, toByteOffset: count, as: UInt8.self)
            count += 1
        }

        @inline(__always)
        mutating func reserve(_ extra: Int) {
            if count + extra > capacity { grow(toHold: extra) }
        }

        @inline(never)
        mutating func grow(toHold extra: Int) {
            var grown = capacity * 2
            while count + extra > grown { grown *= 2 }
            let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
            larger.copyMemory(from: buffer, byteCount: count)
            buffer.deallocate()
            buffer = larger
            capacity = grown
        }

        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            reserve(bytes.count)
            (buffer + count).copyMemory(from: base, byteCount: bytes.count)
            count += bytes.count
        }

        mutating func raw(_ text: StaticString) {
            append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }

        mutating func byte(_ value: UInt8) {
            reserve(1)
            buffer.storeBytes(of: value, toByteOffset: count, as: UInt8.self)
            count += 1
        }

        mutating func uuid(_ id: UUID) {
            reserve(36)
            let bytes = id.uuid
            let high =
                UInt64(bytes.0) << 56 | UInt64(bytes.1) << 48 | UInt64(bytes.2) << 40 | UInt64(bytes.3) << 32
                | UInt64(bytes.4) << 24 | UInt64(bytes.5) << 16 | UInt64(bytes.6) << 8 | UInt64(bytes.7)
            let low =
                UInt64(bytes.8) << 56 | UInt64(bytes.9) << 48 | UInt64(bytes.10) << 40 | UInt64(bytes.11) << 32
                | UInt64(bytes.12) << 24 | UInt64(bytes.13) << 16 | UInt64(bytes.14) << 8 | UInt64(bytes.15)
            let target = buffer + count
            // 8-4-4-4-12 hex digits, uppercase as `uuidString`, eight at a time.
            let first = Self.hexDigits(UInt32(truncatingIfNeeded: high >> 32))
            let second = Self.hexDigits(UInt32(truncatingIfNeeded: high))
            let third = Self.hexDigits(UInt32(truncatingIfNeeded: low >> 32))
            let fourth = Self.hexDigits(UInt32(truncatingIfNeeded: low))
            target.storeBytes(of: first, toByteOffset: 0, as: UInt64.self)
            target.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 8, as: UInt8.self)
            target.storeBytes(of: UInt32(truncatingIfNeeded: second), toByteOffset: 9, as: UInt32.self)
            target.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 13, as: UInt8.self)
            target.storeBytes(of: UInt32(truncatingIfNeeded: second >> 32), toByteOffset: 14, as: UInt32.self)
            target.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 18, as: UInt8.self)
            target.storeBytes(of: UInt32(truncatingIfNeeded: third), toByteOffset: 19, as: UInt32.self)
            target.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 23, as: UInt8.self)
            target.storeBytes(of: UInt32(truncatingIfNeeded: third >> 32), toByteOffset: 24, as: UInt32.self)
            target.storeBytes(of: fourth, toByteOffset: 28, as: UInt64.self)
            count += 36
        }

        /// The eight uppercase hex digits of `value`, as a word whose bytes in memory (little
        /// endian) are the digits in order.
        @inline(__always)
        static func hexDigits(_ value: UInt32) -> UInt64 {
            // One nibble a byte, the most significant in the lowest byte after the swap.
            var spread = UInt64(value)
            spread = (spread | spread << 16) & 0x0000_FFFF_0000_FFFF
            spread = (spread | spread << 8) & 0x00FF_00FF_00FF_00FF
            spread = (spread | spread << 4) & 0x0F0F_0F0F_0F0F_0F0F
            spread = spread.byteSwapped
            // `0`…`9` are 0x30 up; `A`…`F` are 7 further (nibbles of 10 and more carry into bit 4).
            let letters = ((spread &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
            return spread &+ 0x3030_3030_3030_3030 &+ letters &* 7
        }

        /// A JSON string, escaped as ``JSONWriter`` escapes it.
        mutating func quoted(_ text: String) {
            if let done = text.utf8.withContiguousStorageIfAvailable({ quoted(utf8: $0) }) { return done }
            var text = text
            text.withUTF8 { quoted(utf8: $0) }
        }

        mutating func quoted(utf8: UnsafeBufferPointer<UInt8>) {
            // Six bytes per input byte at worst (`\u00XX`), plus the quotes.
            reserve(utf8.count * 6 + 2)
            var out = buffer + count
            out.storeBytes(of: UInt8(ascii: "\""), as: UInt8.self)
            out += 1
            // Byte by byte: the strings of an event are short, and a call to copy a few bytes
            // costs more than storing them.
            for byte in utf8 {
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                    out.storeBytes(of: byte, as: UInt8.self)
                    out += 1
                } else {
                    out += Self.escape(byte, into: out)
                }
            }
            out.storeBytes(of: UInt8(ascii: "\""), as: UInt8.self)
            out += 1
            count = out - buffer
        }

        /// Writes the escape for `byte`; returns its length.
        static func escape(_ byte: UInt8, into out: UnsafeMutableRawPointer) -> Int {
            out.storeBytes(of: UInt8(ascii: "\\"), as: UInt8.self)
            let short: UInt8? =
                switch byte {
                case UInt8(ascii: "\""): UInt8(ascii: "\"")
                case UInt8(ascii: "\\"): UInt8(ascii: "\\")
                case 0x0A: UInt8(ascii: "n")
                case 0x0D: UInt8(ascii: "r")
                case 0x09: UInt8(ascii: "t")
                case 0x08: UInt8(ascii: "b")
                case 0x0C: UInt8(ascii: "f")
                default: nil
                }
            if let short {
                out.storeBytes(of: short, toByteOffset: 1, as: UInt8.self)
                return 2
            }
            let lower = UInt8(ascii: "a") &- 10
            let high = byte >> 4, low = byte & 0x0F
            out.storeBytes(of: UInt8(ascii: "u"), toByteOffset: 1, as: UInt8.self)
            out.storeBytes(of: UInt8(ascii: "0"), toByteOffset: 2, as: UInt8.self)
            out.storeBytes(of: UInt8(ascii: "0"), toByteOffset: 3, as: UInt8.self)
            out.storeBytes(of: high < 10 ? UInt8(ascii: "0") + high : lower + high, toByteOffset: 4, as: UInt8.self)
            out.storeBytes(of: low < 10 ? UInt8(ascii: "0") + low : lower + low, toByteOffset: 5, as: UInt8.self)
            return 6
        }

        mutating func object(_ members: [String: EventValue]) {
            byte(UInt8(ascii: "{"))
            var first = true
            for (key, member) in members {
                if !first { byte(UInt8(ascii: ",")) }
                first = false
                quoted(key)
                byte(UInt8(ascii: ":"))
                value(member)
            }
            byte(UInt8(ascii: "}"))
        }

        mutating func value(_ value: EventValue) {
            switch value {
            case .null: raw("null")
            case .bool(let flag): if flag { raw("true") } else { raw("false") }
            case .int(let number): integer(number)
            case .double(let number):
                if number.isFinite {
                    var text = number.description
                    text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
                } else {
                    raw("null")
                }
            case .string(let text): quoted(text)
            case .array(let elements):
                byte(UInt8(ascii: "["))
                for (index, element) in elements.enumerated() {
                    if index > 0 { byte(UInt8(ascii: ",")) }
                    self.value(element)
                }
                byte(UInt8(ascii: "]"))
            case .object(let members): object(members)
            }
        }

        mutating func integer(_ value: Int) {
            reserve(20)
            if value >= 0 && value < 10 {
                buffer.storeBytes(of: UInt8(ascii: "0") &+ UInt8(value), toByteOffset: count, as: UInt8.self)
                count += 1
                return
            }
            var magnitude = value.magnitude
            var digits = 0
            var scan = magnitude
            while scan > 0 {
                digits += 1
                scan /= 10
            }
            if value < 0 {
                buffer.storeBytes(of: UInt8(ascii: "-"), toByteOffset: count, as: UInt8.self)
                count += 1
            }
            var index = count + digits - 1
            while magnitude > 0 {
                buffer.storeBytes(of: UInt8(ascii: "0") &+ UInt8(magnitude % 10), toByteOffset: index, as: UInt8.self)
                magnitude /= 10
                index -= 1
            }
            count += digits
        }
    }
}
