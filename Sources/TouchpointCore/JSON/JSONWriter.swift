import Foundation

/// Writes compact JSON into a byte buffer, fast enough for the record path.
///
/// Foundation's `JSONEncoder` costs tens of microseconds per small object on Linux; this writer
/// appends UTF-8 directly and is what the event log, the delivery payloads and the collector use.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.key("name"); writer.string("button_tap")
/// writer.endObject()
/// let line = writer.bytes  // {"name":"button_tap"}
/// ```
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8]
    /// Whether objects are written with their keys sorted, for stable output (ETags, golden files).
    public var sortsKeys: Bool
    private var needsComma = false

    /// Creates an empty writer.
    /// - Parameters:
    ///   - capacity: bytes to reserve up front.
    ///   - sortsKeys: whether object keys are written in sorted order.
    public init(capacity: Int = 256, sortsKeys: Bool = false) {
        bytes = []
        bytes.reserveCapacity(capacity)
        self.sortsKeys = sortsKeys
    }

    /// Empties the buffer, keeping its capacity.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    // MARK: Structure

    /// Writes `{`.
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Writes `}`.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Writes `[`.
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Writes `]`.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes an object key and its colon; the value written next belongs to it.
    public mutating func key(_ key: String) {
        separate()
        appendQuoted(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Scalars

    /// Writes a string value.
    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
        needsComma = true
    }

    /// Writes an integer value.
    public mutating func int(_ value: Int) {
        separate()
        appendInteger(value)
        needsComma = true
    }

    /// Writes a number; NaN and infinities, which JSON cannot hold, become `null`.
    public mutating func double(_ value: Double) {
        separate()
        if value.isFinite {
            bytes.append(contentsOf: value.description.utf8)
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
        needsComma = true
    }

    /// Writes `null`.
    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
        needsComma = true
    }

    /// Writes a UUID as a string value in its canonical uppercase form (`uuidString`).
    public mutating func uuid(_ value: UUID) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        value.appendString(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes a date as an ISO-8601 string value with milliseconds in UTC (see ``Timestamp``).
    public mutating func timestamp(_ value: Date) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        Timestamp.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes bytes that already are one complete JSON value, as a value.
    public mutating func raw<Bytes: Sequence>(_ json: Bytes) where Bytes.Element == UInt8 {
        separate()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    /// Writes any `JSONValue`.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .int(let number): int(number)
        case .double(let number): double(number)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            object(members)
        }
    }

    /// Writes an object from a dictionary of values.
    public mutating func object(_ members: [String: JSONValue]) {
        beginObject()
        if sortsKeys {
            for key in members.keys.sorted() {
                self.key(key)
                value(members[key]!)
            }
        } else {
            for (key, member) in members {
                self.key(key)
                value(member)
            }
        }
        endObject()
    }

    /// Appends a newline, ending a JSON Lines record.
    public mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        needsComma = false
    }

    // MARK: Internals

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func appendInteger(_ value: Int) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(value))
            return
        }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch for up to 20 digits
        let count = withUnsafeMutableBytes(of: &digits) { scratch -> Int in
            var index = scratch.count
            while magnitude > 0 {
                index -= 1
                scratch[index] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
            }
            return scratch.count - index
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        withUnsafeBytes(of: &digits) { scratch in
            bytes.append(contentsOf: scratch[(scratch.count - count)...])
        }
    }

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if start < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index])) }
                appendEscape(byte)
                start = index + 1
            }
            if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    private mutating func appendEscape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        default:
            bytes.append(contentsOf: "u00".utf8)
            bytes.append(Self.hexDigit(byte >> 4))
            bytes.append(Self.hexDigit(byte & 0x0F))
        }
    }
}

extension JSONValue {
    /// This value as compact JSON bytes.
    /// - Parameter sortedKeys: whether object keys are written in sorted order (stable output).
    public func jsonBytes(sortedKeys: Bool = false) -> [UInt8] {
        var writer = JSONWriter(capacity: 64, sortsKeys: sortedKeys)
        writer.value(self)
        return writer.bytes
    }

    /// This value as a compact JSON string.
    /// - Parameter sortedKeys: whether object keys are written in sorted order (stable output).
    public func jsonString(sortedKeys: Bool = false) -> String {
        String(decoding: jsonBytes(sortedKeys: sortedKeys), as: UTF8.self)
    }
}
