import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// A funnel's step events packed into one `bytea` by PostgreSQL and read back here.
struct PackedFunnelRowsTests {
    /// Rows at the edges of what the format holds: the largest numbers, times before 1970, every
    /// step bit of a ten-step funnel, and values absent, empty, and of several bytes a character.
    static let rows = [
        FunnelRow(person: 1, timestamp: 1_780_000_000_123, steps: 1, value: "pro", sequence: 7),
        FunnelRow(person: Int64.max, timestamp: -86_400_000, steps: 1023, value: nil, sequence: Int64.max),
        FunnelRow(person: 300_000, timestamp: 0, steps: 512, value: "", sequence: 1),
        FunnelRow(person: 42, timestamp: Int64.max, steps: 6, value: "Prö ✉ 日本", sequence: 3_000_000_000),
    ]

    /// `rows` as read without a breakdown: no values.
    static let rowsWithoutValues = rows.map { row in
        var row = row
        row.value = nil
        return row
    }

    /// The format as ``PackedFunnelRows`` documents it, written out byte by byte; `length`
    /// replaces each value's length when given.
    static func pack(_ rows: [FunnelRow], values: Bool, length: Int32? = nil) -> [UInt8] {
        func bigEndian<Integer: FixedWidthInteger>(_ value: Integer) -> [UInt8] {
            withUnsafeBytes(of: value.bigEndian, Array.init)
        }
        return rows.flatMap { row in
            var bytes =
                bigEndian(row.person) + bigEndian(row.timestamp) + bigEndian(row.sequence) + bigEndian(Int16(row.steps))
            if values {
                let text = row.value.map { Array($0.utf8) }
                bytes += bigEndian(length ?? Int32(text?.count ?? -1)) + (text ?? [])
            }
            return bytes
        }
    }

    @Test(arguments: [false, true])
    func theRowsComeBackAsPacked(values: Bool) throws {
        let expected = values ? Self.rows : Self.rowsWithoutValues
        #expect(try PackedFunnelRows.rows(Self.pack(Self.rows, values: values), values: values) == expected)
        #expect(try PackedFunnelRows.rows([], values: values).isEmpty)
    }

    /// Bytes cut anywhere inside a row, or a value's length below −1, are an error naming where,
    /// never a crash or a row made up.
    @Test(arguments: [false, true])
    func bytesThatAreNotWhatIsWrittenAreAnError(values: Bool) {
        let bytes = Self.pack(Self.rows, values: values)
        let ends = Set(Self.rows.indices.map { Self.pack(Array(Self.rows.prefix($0 + 1)), values: values).count })
        for length in 1..<bytes.count where !ends.contains(length) {
            let error = #expect(throws: StorageError.self, "cut at \(length)") {
                try PackedFunnelRows.rows(Array(bytes.prefix(length)), values: values)
            }
            #expect(error?.code == .corruptRow)
            #expect(error?.message.contains("at byte ") == true, "\(error?.message ?? "")")
        }
        guard values else { return }
        for length in [Int32(-2), Int32.min, Int32.max] {
            let error = #expect(throws: StorageError.self, "length \(length)") {
                try PackedFunnelRows.rows(Self.pack(Self.rows, values: true, length: length), values: true)
            }
            #expect(error?.message.contains("at byte 30") == true, "\(error?.message ?? "")")
        }
    }

    /// PostgreSQL's aggregate writes what the reader reads: the same rows, the events without a
    /// person left out.
    @Test(
        .enabled(if: PostgresTestEnvironment.enabled, "needs TOUCHPOINT_TEST_POSTGRES_URL"), arguments: [false, true])
    func postgreSQLPacksWhatIsRead(values: Bool) async throws {
        try await withStorage(.postgres) { storage async throws in
            // A row without a person among them, which the aggregate leaves out.
            var people: [Int64?] = Self.rows.map(\.person)
            var rows = Self.rows
            people.insert(nil, at: 2)
            rows.insert(FunnelRow(person: 0, timestamp: 5, steps: 2, value: "x", sequence: 9), at: 2)
            var sql =
                "SELECT \(PackedFunnelRows.aggregate(values: values)) FROM (SELECT person, timestamp, seq, steps, textsend(value) AS value FROM (VALUES "
            var binds: [SQLValue] = []
            for (index, row) in rows.enumerated() {
                let base = binds.count
                sql += index == 0 ? "" : ", "
                sql +=
                    "(\(index), $\(base + 1)::bigint, $\(base + 2)::bigint, $\(base + 3)::bigint, $\(base + 4)::int, $\(base + 5)::text)"
                binds += [
                    .optional(people[index]), .int(row.timestamp), .int(row.sequence), .int(Int64(row.steps)),
                    .optional(row.value),
                ]
            }
            sql += ") AS v (position, person, timestamp, seq, steps, value)) q"
            let answer = try await storage.backend.query(sql, binds, bytesAt: [0])
            let bytes = try #require(answer.first?.first?.bytes)
            // In no particular order: compared by their order of arrival.
            let read = try PackedFunnelRows.rows(bytes, values: values).sorted { $0.sequence < $1.sequence }
            let expected = (values ? Self.rows : Self.rowsWithoutValues).sorted { $0.sequence < $1.sequence }
            #expect(read == expected)
        }
    }
}
