/// A funnel's step events as PostgreSQL packs them into one `bytea`, so that a million of them
/// cross the connection as one value rather than as a million rows, each a message of its own
/// that the client parses and hands over one by one.
///
/// Each event is 18 bytes, big-endian (as `int8send` and `int2send` write them): the person's
/// number, the time in milliseconds, the steps it is (bit `i` for step `i`). With a breakdown,
/// the property's value follows: its length in bytes (`int4send`; −1 when absent) and its UTF-8
/// bytes. The events are in the order the statement read them, as rows would be. One value holds
/// up to PostgreSQL's 1 GB: some 59 million step events in half a funnel's range, more than the
/// collector would hold in memory for one answer anyway.
enum PackedFunnelRows {
    /// The aggregate that packs the rows of a subquery `q` with the columns `person`,
    /// `timestamp`, `steps` and, with `values`, `value` as ``packed(_:)`` (a `bytea` from
    /// `textsend`). `string_agg` leaves out the events without a person: their part is NULL.
    static func aggregate(values: Bool) -> String {
        let value = values ? " || int4send(COALESCE(length(value), -1)) || COALESCE(value, ''::bytea)" : ""
        return "string_agg(int8send(person) || int8send(timestamp) || int2send(steps::int2)\(value), ''::bytea)"
    }

    /// What the packed bytes hold is not what ``aggregate(values:)`` writes.
    struct Malformed: Error, CustomStringConvertible {
        var offset: Int
        var description: String { "the funnel's packed step events end in the middle of one, at byte \(offset)" }
    }

    /// The rows `bytes` holds (see ``aggregate(values:)``), in their order.
    static func rows(_ bytes: [UInt8], values: Bool) throws(Malformed) -> [FunnelRow] {
        var rows: [FunnelRow] = []
        rows.reserveCapacity(bytes.count / (values ? 22 : 18))
        var offset = 0
        // Reads `count` bytes at `offset` as a big-endian integer.
        func integer(_ count: Int) throws(Malformed) -> Int64 {
            guard bytes.count - offset >= count else { throw Malformed(offset: offset) }
            var value: UInt64 = 0
            for index in offset..<offset + count { value = value << 8 | UInt64(bytes[index]) }
            offset += count
            // Sign-extend a shorter integer.
            let unused = UInt64(64 - 8 * count)
            return Int64(bitPattern: value << unused) >> unused
        }
        while offset < bytes.count {
            let person = try integer(8)
            let timestamp = try integer(8)
            let steps = Int(try integer(2))
            var value: String?
            if values {
                let length = Int(try integer(4))
                if length >= 0 {
                    guard bytes.count - offset >= length else { throw Malformed(offset: offset) }
                    value = String(decoding: bytes[offset..<offset + length], as: UTF8.self)
                    offset += length
                }
            }
            rows.append(FunnelRow(person: person, timestamp: timestamp, steps: steps, value: value))
        }
        return rows
    }
}
