import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// A funnel's step events packed into one `bytea` by PostgreSQL and read back here.
struct PackedFunnelRowsTests {
    /// Rows at the edges of what the format holds: the largest numbers, times before 1970, every
    /// step bit of a ten-step funnel, and values absent, empty, and of several bytes a character.
    static let rows = [
        FunnelRow(person: 1, timestamp: 1_780_000_000_123, steps: 1, value: "pro"),
        FunnelRow(person: Int64.max, timestamp: -86_400_000, steps: 1023, value: nil),
        FunnelRow(person: 300_000, timestamp: 0, steps: 512, value: ""),
        FunnelRow(person: 42, timestamp: Int64.max, steps: 6, value: "Prö ✉ 日本"),
    ]

    /// The format as ``PackedFunnelRows`` documents it, written out byte by byte.
    static func pack(_ rows: [FunnelRow], values: Bool) -> [UInt8] {
        func bigEndian<Integer: FixedWidthInteger>(_ value: Integer) -> [UInt8] {
            withUnsafeBytes(of: value.bigEndian, Array.init)
        }
        return rows.flatMap { row in
            var bytes = bigEndian(row.person) + bigEndian(row.timestamp) + bigEndian(Int16(row.steps))
            if values {
                let text = row.value.map { Array($0.utf8) }
                bytes += bigEndian(Int32(text?.count ?? -1)) + (text ?? [])
            }
            return bytes
        }
    }

    @Test(arguments: [false, true])
    func theRowsComeBackAsPacked(values: Bool) throws {
        let expected =
            values
            ? Self.rows
            : Self.rows.map { FunnelRow(person: $0.person, timestamp: $0.timestamp, steps: $0.steps, value: nil) }
        #expect(try PackedFunnelRows.rows(Self.pack(Self.rows, values: values), values: values) == expected)
        #expect(try PackedFunnelRows.rows([], values: values).isEmpty)
    }

    /// Bytes cut anywhere inside a row are an error naming where, never a crash or a row made up.
    @Test(arguments: [false, true])
    func bytesEndingInsideARowAreAnError(values: Bool) {
        let bytes = Self.pack(Self.rows, values: values)
        let ends = Set(Self.rows.indices.map { Self.pack(Array(Self.rows.prefix($0 + 1)), values: values).count })
        for length in 1..<bytes.count where !ends.contains(length) {
            #expect(throws: PackedFunnelRows.Malformed.self, "cut at \(length)") {
                try PackedFunnelRows.rows(Array(bytes.prefix(length)), values: values)
            }
        }
    }

    /// PostgreSQL's aggregate writes what the reader reads: the same rows, in their order, the
    /// events without a person left out.
    @Test(
        .enabled(if: PostgresTestEnvironment.enabled, "needs TOUCHPOINT_TEST_POSTGRES_URL"), arguments: [false, true])
    func postgreSQLPacksWhatIsRead(values: Bool) async throws {
        try await withStorage(.postgres) { storage async throws in
            var sql =
                "SELECT \(PackedFunnelRows.aggregate(values: values)) FROM (SELECT person, timestamp, steps, textsend(value) AS value FROM (VALUES "
            var binds: [SQLValue] = []
            var rows = Self.rows
            rows.insert(FunnelRow(person: 0, timestamp: 5, steps: 2, value: "no person"), at: 2)
            for (index, row) in rows.enumerated() {
                let base = binds.count
                sql += index == 0 ? "" : ", "
                sql += "(\(index), $\(base + 1)::bigint, $\(base + 2)::bigint, $\(base + 3)::int, $\(base + 4)::text)"
                binds += [
                    row.value == "no person" ? .null : .int(row.person), .int(row.timestamp), .int(Int64(row.steps)),
                    .optional(row.value),
                ]
            }
            sql += ") AS v (position, person, timestamp, steps, value) ORDER BY position) q"
            let answer = try await storage.backend.query(sql, binds, bytesAt: [0])
            let bytes = try #require(answer.first?.first?.bytes)
            let expected = Self.rows.map {
                FunnelRow(person: $0.person, timestamp: $0.timestamp, steps: $0.steps, value: values ? $0.value : nil)
            }
            #expect(try PackedFunnelRows.rows(bytes, values: values) == expected)
        }
    }
}
