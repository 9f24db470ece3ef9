/// 64-bit keys and the rows they belong to (a rowid or seq each), held in memory until they are
/// merged into a key-ordered table: the recent part of ``MessageKeyIndex`` and ``SessionKeys``.
///
/// Most keys have one row; two ids that share a key have a row each, all kept.
struct KeysInMemory {
    /// The first row recorded with each key.
    private var first: [Int64: Int64] = [:]
    /// Further rows with a key already in `first`.
    private var more: [Int64: [Int64]] = [:]
    /// The rows held.
    private(set) var count = 0

    /// Notes that `row` has `key`.
    mutating func insert(_ key: Int64, row: Int64) {
        if first[key] == nil {
            first[key] = row
        } else {
            more[key, default: []].append(row)
        }
        count += 1
    }

    /// Calls `body` with each row held with `key`.
    func forEachRow(of key: Int64, _ body: (Int64) -> Void) {
        guard let row = first[key] else { return }
        body(row)
        for row in more[key] ?? [] { body(row) }
    }

    /// The smallest row held (nil: none).
    private var oldest: Int64? {
        var oldest = first.values.min()
        for rows in more.values { oldest = min(oldest ?? .max, rows.min() ?? .max) }
        return oldest
    }

    /// What one merge takes: all the (key, row)s held when there are at most `maximum`; else those
    /// of the `maximum` rows from the oldest held (not from a watermark: the rows after it may have
    /// been deleted before a restart). Each row is held once, so at most `maximum` of them.
    func oldestEntries(atMost maximum: Int) -> [(key: Int64, row: Int64)] {
        guard count > maximum, let oldest else { return entries(through: .max, capacity: count) }
        return entries(through: oldest - 1 + Int64(maximum), capacity: maximum)
    }

    /// Every (key, row) held whose row is at most `last`, in no particular order (room made for
    /// `capacity`: a backlog can be millions more than one merge takes).
    private func entries(through last: Int64, capacity: Int) -> [(key: Int64, row: Int64)] {
        var entries: [(key: Int64, row: Int64)] = []
        entries.reserveCapacity(capacity)
        for (key, row) in first where row <= last { entries.append((key, row)) }
        for (key, rows) in more { for row in rows where row <= last { entries.append((key, row)) } }
        return entries
    }

    /// Removes one (key, row), if it is held. A key whose first row goes keeps its others: the
    /// next becomes its first.
    mutating func remove(_ key: Int64, row: Int64) {
        if first[key] == row {
            if var rows = more.removeValue(forKey: key) {
                first[key] = rows.removeFirst()
                if !rows.isEmpty { more[key] = rows }
            } else {
                first[key] = nil
            }
        } else if var rows = more[key], let position = rows.firstIndex(of: row) {
            rows.remove(at: position)
            more[key] = rows.isEmpty ? nil : rows
        } else {
            return
        }
        count -= 1
    }
}
