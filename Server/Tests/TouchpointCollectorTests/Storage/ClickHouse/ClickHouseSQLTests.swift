import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// What ``ClickHouseSQL`` prints for each kind of interpolation.
@Suite("ClickHouse statements")
struct ClickHouseSQLTests {
    @Test(arguments: [
        ("plain", "'plain'"), ("it's", #"'it\'s'"#), (#"a\b"#, #"'a\\b'"#), ("nul\0", #"'nul\0'"#),
        (#"\'"#, #"'\\\''"#), ("", "''"), ("line\r\nnext", "'line\r\nnext'"), ("ünï 🙂", "'ünï 🙂'"),
    ])
    func aStringIsOneQuotedLiteral(value: String, printed: String) {
        let sql: ClickHouseSQL = "\(value)"
        #expect(sql.text == printed)
    }

    @Test func numbersPrintAsNumbers() {
        let sql: ClickHouseSQL = "\(42), \(Int64(-7)), \(UInt64.max), \(UInt16(3)), \(0.5), \(-2.25), \(1e-07)"
        #expect(sql.text == "42, -7, 18446744073709551615, 3, 0.5, -2.25, 1e-07")
        let special: ClickHouseSQL = "\(Double.nan), \(Double.infinity), \(-Double.infinity)"
        #expect(special.text == "nan, inf, -inf")
    }

    @Test func fragmentsNestAsTheyAre() {
        let condition: ClickHouseSQL = "event = \("it's")"
        let sql: ClickHouseSQL = "SELECT count() FROM \(identifier: "events") WHERE \(condition) LIMIT \(10)"
        #expect(sql.text == #"SELECT count() FROM events WHERE event = 'it\'s' LIMIT 10"#)
        let joined = ([condition, "1"] as [ClickHouseSQL]).joined(separator: " AND ")
        #expect(joined.text == #"event = 'it\'s' AND 1"#)
        let list: ClickHouseSQL = "IN (\(list: ["a", "b'c"])) AND [\(list: [])]"
        #expect(list.text == #"IN ('a', 'b\'c') AND []"#)
        let written: ClickHouseSQL = "\(raw: "intDiv(ts, 1000)")"
        #expect(written.text == "intDiv(ts, 1000)")
        let fixed: ClickHouseSQL = "SELECT 'a' -- it's a comment"
        #expect(fixed.text == "SELECT 'a' -- it's a comment")
    }

    /// Values that would end a literal, a line or a statement if printed as they are, and text that
    /// reads as SQL.
    static let hostile: [String] = [
        "it's", "'", "''", #"\"#, #"\'"#, #"a\"#, #"\\'"#, "nul\0inside", "\0", "line\r\nnext", "\n", "\t",
        "ünïcödé 🙂", "e\u{301}", "\u{FEFF}\u{2028}\u{7F}", #"x' OR '1'='1"#, "'; DROP TABLE events; --",
        #"\'); SELECT 1; --"#, "*/ SELECT 1 /*", "`events`", #""quoted""#, "{name:String}", "$1", "?",
        String(repeating: #"a'b\c"#, count: 2000) + "\0\r\n🙂",
    ]

    @Test func aTenKilobyteValueIsOneLiteral() {
        let value = Self.hostile.last ?? ""
        #expect(value.utf8.count > 10_000)
        let sql: ClickHouseSQL = "\(value)"
        #expect(sql.text.hasPrefix("'a\\'b\\\\c") && sql.text.hasSuffix("\\0\r\n🙂'"))
    }
}

/// The literals ``ClickHouseSQL`` prints read back by ClickHouse as the values they were made from.
@Suite(
    "ClickHouse statements, read back",
    .enabled(if: ClickHouseTestEnvironment.enabled, "needs TOUCHPOINT_TEST_CLICKHOUSE_URL"))
struct ClickHouseSQLRoundTripTests {
    @Test(arguments: ClickHouseSQLTests.hostile)
    func aValueReadsBackAsItself(value: String) async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            let rows = try await client.rows(
                "SELECT \(value) AS v, length(\(value)) AS bytes, [\(list: [value, "b"])] AS list")
            #expect(rows.count == 1)
            #expect(rows.first?["v"] == .string(value))
            #expect(rows.first?["bytes"]?.intValue == value.utf8.count)
            #expect(rows.first?["list"] == .array([.string(value), .string("b")]))
        }
    }

    @Test func numbersReadBackAsThemselves() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            let rows = try await client.rows(
                """
                SELECT \(42) AS int, \(Int64(-42)) AS negative, \(UInt64.max) = 18446744073709551615 AS largest,
                    \(0.1) AS tenth, \(-2.5) AS half, \(1e-07) AS small, isNaN(\(Double.nan)) AS nan,
                    \(Double.infinity) > 1e308 AND \(-Double.infinity) < -1e308 AS infinite
                """)
            let row = try #require(rows.first)
            #expect(row["int"] == .int(42))
            #expect(row["negative"] == .int(-42))
            #expect(row["largest"] == .int(1))
            #expect(row["tenth"]?.doubleValue == 0.1)
            #expect(row["half"]?.doubleValue == -2.5)
            #expect(row["small"]?.doubleValue == 1e-07)
            #expect(row["nan"] == .int(1))
            #expect(row["infinite"] == .int(1))
        }
    }
}
