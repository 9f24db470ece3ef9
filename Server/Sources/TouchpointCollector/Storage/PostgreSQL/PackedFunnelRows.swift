/// A funnel's step events as PostgreSQL packs them into one `bytea`, so that a million of them
/// cross the connection as one value rather than as a million rows, each a message of its own
/// that the client parses and hands over one by one.
///
/// Each event is 26 bytes, big-endian (as `int8send` and `int2send` write them): the person's
/// number, the time in milliseconds, the order of arrival (`seq`), the steps it is (bit `i` for
/// step `i`). With a breakdown, the property's value follows: its length in bytes (`int4send`; −1
/// when absent) and its UTF-8 bytes. The events are in no particular order: each carries its
/// `seq`, which orders a person's events at one time. One value holds up to PostgreSQL's 1 GB:
/// some 40 million step events in half a funnel's range (fewer with long breakdown values), more
/// than the collector would hold in memory for one answer anyway.
enum PackedFunnelRows {
    /// The aggregate that packs the rows of a subquery `q` with the columns `person`,
    /// `timestamp`, `seq`, `steps` and, with `values`, `value` (a `bytea` from `textsend`) as
    /// ``rows(_:values:)`` reads them. `string_agg` leaves out the events without a person: their
    /// part is NULL.
    static func aggregate(values: Bool) -> String {
        let value = values ? " || int4send(COALESCE(length(value), -1)) || COALESCE(value, ''::bytea)" : ""
        return
            "string_agg(int8send(person) || int8send(timestamp) || int8send(seq) || int2send(steps::int2)\(value), ''::bytea)"
    }

    /// The rows `bytes` holds (see ``aggregate(values:)``), in their order; bytes that are not what
    /// it writes are an error naming the byte where they stop making sense.
    static func rows(_ bytes: [UInt8], values: Bool) throws(StorageError) -> [FunnelRow] {
        var rows: [FunnelRow] = []
        rows.reserveCapacity(bytes.count / (values ? 30 : 26))
        var offset = 0
        func malformed(_ what: String) -> StorageError {
            StorageError(code: .corruptRow, message: "a funnel's packed step events: \(what) at byte \(offset)")
        }
        // Reads `count` bytes at `offset` as a big-endian integer.
        func integer(_ count: Int) throws(StorageError) -> Int64 {
            guard bytes.count - offset >= count else { throw malformed("an event cut short") }
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
            let sequence = try integer(8)
            let steps = Int(try integer(2))
            var value: String?
            if values {
                let length = Int(try integer(4))
                guard length >= -1 else { throw malformed("a value's length of \(length)") }
                if length >= 0 {
                    guard bytes.count - offset >= length else { throw malformed("a value cut short") }
                    value = String(decoding: bytes[offset..<offset + length], as: UTF8.self)
                    offset += length
                }
            }
            rows.append(
                FunnelRow(person: person, timestamp: timestamp, steps: steps, value: value, sequence: sequence))
        }
        return rows
    }
}
