import VaporCSQLite

/// SQLite's `touchpoint_percentile(value, fraction)`: the continuous percentile of a group's
/// numbers, interpolated between the two nearest as PostgreSQL's `percentile_cont` does (SQLite
/// has no percentile of its own in this build). Values that are not numbers (NULL, text) are left
/// out; a group without numbers gives NULL.
///
/// Each group keeps its numbers in a ``Values`` box that SQLite's aggregate context points to,
/// retained from the first number to the group's end.
enum SQLitePercentile {
    /// One group's numbers and the fraction asked for.
    final class Values {
        var numbers: [Double] = []
        var fraction = 0.5
    }

    /// The percentile `fraction` (0 to 1) of `numbers`; nil when there are none.
    static func percentile(_ fraction: Double, of numbers: [Double]) -> Double? {
        guard !numbers.isEmpty else { return nil }
        let sorted = numbers.sorted()
        let position = min(max(fraction, 0), 1) * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }

    /// Registers the function on a connection.
    static func register(_ handle: OpaquePointer) {
        sqlite_nio_sqlite3_create_function_v2(
            handle, "touchpoint_percentile", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, nil,
            { context, count, arguments in
                guard let context, count == 2, let arguments, let value = arguments[0] else { return }
                let type = sqlite_nio_sqlite3_value_type(value)
                guard type == SQLITE_INTEGER || type == SQLITE_FLOAT,
                    let slot = sqlite_nio_sqlite3_aggregate_context(
                        context, Int32(MemoryLayout<UnsafeMutableRawPointer?>.size))
                else { return }
                let pointer = slot.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
                let values: Values
                if let kept = pointer.pointee {
                    values = Unmanaged<Values>.fromOpaque(kept).takeUnretainedValue()
                } else {
                    values = Values()
                    if let fraction = arguments[1] { values.fraction = sqlite_nio_sqlite3_value_double(fraction) }
                    pointer.pointee = Unmanaged.passRetained(values).toOpaque()
                }
                values.numbers.append(sqlite_nio_sqlite3_value_double(value))
            },
            { context in
                // A size of 0: the group's context if a number made one, else nothing.
                guard let context, let slot = sqlite_nio_sqlite3_aggregate_context(context, 0),
                    let kept = slot.assumingMemoryBound(to: UnsafeMutableRawPointer?.self).pointee
                else {
                    sqlite_nio_sqlite3_result_null(context)
                    return
                }
                let values = Unmanaged<Values>.fromOpaque(kept).takeRetainedValue()
                if let result = SQLitePercentile.percentile(values.fraction, of: values.numbers) {
                    sqlite_nio_sqlite3_result_double(context, result)
                } else {
                    sqlite_nio_sqlite3_result_null(context)
                }
            }, nil)
    }
}
