import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

@Suite("ClickHouse RowBinary rows")
struct ClickHouseRowBinaryTests {
    /// A string as `RowBinary` writes it: its length in LEB128, then its bytes.
    static func string(_ bytes: [UInt8]) -> [UInt8] {
        var encoded: [UInt8] = []
        var length = bytes.count
        repeat {
            encoded.append(UInt8(length & 0x7F) | (length >= 0x80 ? 0x80 : 0))
            length >>= 7
        } while length > 0
        return encoded + bytes
    }

    /// Rows of (UInt64, Int64, UInt16, UInt8, String).
    static let values: [(UInt64, Int64, UInt16, UInt8, [UInt8])] = [
        (0, 0, 0, 0, []), (UInt64.max, Int64.min, UInt16.max, 255, Array("pro".utf8)),
        (1, -1, 1, 1, Array(repeating: UInt8(ascii: "x"), count: 200)),
        (1 << 63, Int64.max, 513, 7, Array(repeating: UInt8(ascii: "y"), count: 20_000)),
        (42, 1_700_000_000_123, 4, 1, Array("tab\tnew\né€".utf8)),
    ]

    static var bytes: [UInt8] {
        var bytes: [UInt8] = []
        for row in values {
            withUnsafeBytes(of: row.0.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: row.1.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: row.2.littleEndian) { bytes += $0 }
            bytes.append(row.3)
            bytes += string(row.4)
        }
        return bytes
    }

    /// The rows read from `bytes`, and whether the reader found them truncated.
    static func read(_ bytes: [UInt8]) -> (rows: [(UInt64, Int64, UInt16, UInt8, String)], truncated: Bool) {
        bytes.withUnsafeBytes { raw in
            var reader = ClickHouseClient.RowBinaryReader(raw)
            var rows: [(UInt64, Int64, UInt16, UInt8, String)] = []
            while !reader.isAtEnd {
                rows.append((reader.uint64(), reader.int64(), reader.uint16(), reader.uint8(), reader.string()))
            }
            return (rows, reader.isTruncated)
        }
    }

    @Test func numbersAreLittleEndianAndStringsCarryTheirLength() {
        let (rows, truncated) = Self.read(Self.bytes)
        #expect(!truncated)
        #expect(rows.count == Self.values.count)
        for (row, expected) in zip(rows, Self.values) {
            #expect(row.0 == expected.0 && row.1 == expected.1 && row.2 == expected.2 && row.3 == expected.3)
            #expect(row.4 == String(decoding: expected.4, as: UTF8.self))
        }
        #expect(Self.read([]).rows.isEmpty)
    }

    @Test func anAnswerCutAnywhereInARowIsTruncated() {
        let bytes = Self.bytes
        let rowEnds = Set(
            Self.values.indices.map { index in
                Self.values[..<(index + 1)].reduce(0) { $0 + 19 + Self.string($1.4).count }
            })
        for count in 0..<bytes.count where !rowEnds.contains(count) && count > 0 {
            #expect(Self.read(Array(bytes[..<count])).truncated, "cut after \(count) bytes")
        }
        for end in rowEnds { #expect(!Self.read(Array(bytes[..<end])).truncated) }
    }

    @Test func aLengthOfMoreBytesThanAnIntHoldsIsTruncated() {
        let (rows, truncated) = Self.read(Array(repeating: 0, count: 19) + Array(repeating: 0xFF, count: 12) + [1])
        #expect(truncated)
        #expect(rows.first?.4 == "")
    }
}

@Suite("ClickHouse URL")
struct ClickHouseURLTests {
    @Test func readsEveryPart() throws {
        let url = try ClickHouseURL("clickhouse://reader:s%40cret@ch.internal:9123/analytics")
        #expect(url.scheme == "http")
        #expect(url.host == "ch.internal")
        #expect(url.port == 9123)
        #expect(url.username == "reader")
        #expect(url.password == "s@cret")
        #expect(url.database == "analytics")
        #expect(url.description == "http://ch.internal:9123/analytics")
    }

    @Test func defaults() throws {
        let plain = try ClickHouseURL("clickhouse://127.0.0.1")
        #expect(plain.port == 8123)
        #expect(plain.username == "default")
        #expect(plain.password == nil)
        #expect(plain.database == "default")
        let secure = try ClickHouseURL("clickhouse://ch.internal/events?secure=true")
        #expect(secure.endpoint == "https://ch.internal:8443")
        #expect(try ClickHouseURL("http://127.0.0.1:58123").endpoint == "http://127.0.0.1:58123")
        #expect(try ClickHouseURL("https://ch.internal").port == 8443)
    }

    @Test(arguments: [
        ("postgres://127.0.0.1/db", "expected clickhouse://"),
        ("clickhouse:///db", "no host"),
        ("clickhouse://127.0.0.1/events;drop", "is not a name of letters, digits and _"),
        ("clickhouse://127.0.0.1/db?secure=maybe", "secure=maybe"),
    ])
    func refusesWhatCannotBeUsed(text: String, reason: String) {
        #expect {
            try ClickHouseURL(text)
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .invalidDatabaseURL && error.message.contains(reason)
        }
    }

    @Test func neverShowsThePassword() throws {
        #expect {
            try ClickHouseURL("clickhouse://user:hunter2@127.0.0.1/bad-name")
        } throws: { error in
            let text = "\(error)"
            return !text.contains("hunter2") && text.contains("***")
        }
    }
}

@Suite("ClickHouse client", .enabled(if: ClickHouseTestEnvironment.enabled, "needs TOUCHPOINT_TEST_CLICKHOUSE_URL"))
struct ClickHouseClientTests {
    @Test func insertsInOneBatchAndReadsBack() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            try await client.execute(
                """
                CREATE TABLE things (id UInt64, name String, at DateTime, score Float64)
                ENGINE = MergeTree ORDER BY id
                """)
            let awkward = "it's a \\ back'slash\nnew line, tab\t, ünïcödé 🙂"
            var rows: [[String: JSONValue]] = (0..<2000).map { index in
                [
                    "id": .int(index), "name": .string("thing \(index)"), "at": .int(1_704_067_200 + index),
                    "score": .double(0.5),
                ]
            }
            rows.append([
                "id": .int(1 << 40), "name": .string(awkward), "at": .int(1_704_067_200), "score": .double(-1.25),
            ])
            try await client.insert(into: "things", rows: rows)

            let counted = try await client.rows("SELECT count() AS n, max(id) AS largest FROM things")
            #expect(counted.first?["n"] == .int(2001))
            #expect(counted.first?["largest"] == .int(1 << 40))
            // The literal round-trips the same awkward text the insert stored.
            let found = try await client.rows(
                "SELECT id, name, toUnixTimestamp(at) AS at, score FROM things WHERE name = \(awkward)"
            )
            #expect(found.count == 1)
            #expect(found.first?["id"] == .int(1 << 40))
            #expect(found.first?["name"] == .string(awkward))
            #expect(found.first?["at"] == .int(1_704_067_200))
            #expect(found.first?["score"] == .double(-1.25))
        }
    }

    @Test func anEmptyResultIsNoRows() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            try await client.execute("CREATE TABLE empty (id UInt64) ENGINE = MergeTree ORDER BY id")
            #expect(try await client.rows("SELECT id FROM empty").isEmpty)
            try await client.insert(into: "empty", rows: [])
            #expect(try await client.rows("SELECT count() AS n FROM empty").first?["n"] == .int(0))
            try await client.ping()
            #expect(try await !client.version().isEmpty)
        }
    }

    @Test func manyRowsAreReadInPlaceAsTheirTypes() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            let sql: ClickHouseSQL = """
                SELECT toUInt64(number * 7919), toInt64(number) - 2, toUInt16(number % 3), toUInt8(number % 2),
                    toString(if(number % 2 = 1, concat('v\\t', toString(number)), ''))
                FROM system.numbers LIMIT 3000
                """
            var rows: [(UInt64, Int64, UInt16, UInt8, String)] = []
            try await client.forEachRow(sql) { reader in
                rows.append((reader.uint64(), reader.int64(), reader.uint16(), reader.uint8(), reader.string()))
            }
            #expect(rows.count == 3000)
            for (number, row) in rows.enumerated() {
                let odd = number % 2 == 1
                #expect(row.0 == UInt64(number) * 7919 && row.1 == Int64(number) - 2)
                #expect(row.2 == UInt16(number % 3) && row.3 == (odd ? 1 : 0))
                #expect(row.4 == (odd ? "v\t\(number)" : ""))
            }
            // A reader that takes fewer columns than the rows have is told so, not handed the rest.
            await #expect {
                try await client.forEachRow("SELECT toUInt64(1), toString('a') FROM system.numbers LIMIT 2") {
                    _ = $0.uint64()
                    _ = $0.uint64()
                }
            } throws: { error in
                (error as? StorageError)?.code == .corruptRow
            }
        }
    }

    @Test func aFailedStatementCarriesClickHousesException() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            await #expect {
                try await client.rows("SELECT id FROM no_such_table")
            } throws: { error in
                guard let error = error as? StorageError else { return false }
                // Named: the statement, the server, ClickHouse's code and its text.
                return error.code == .database && error.message.contains("SELECT id FROM no_such_table")
                    && error.message.contains("Code: 60") && error.message.contains("no_such_table")
                    && error.message.contains(client.url.endpoint) && !error.message.contains("e.what()")
            }
        }
    }

    /// ClickHouse itself stops a read at its limit (`max_execution_time`): too slow, not unavailable.
    @Test func aReadPastItsTimeLimitIsStoppedAsTooSlow() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            await #expect {
                try await client.rows("SELECT count() AS n FROM system.numbers", timeLimit: .seconds(1))
            } throws: { error in
                (error as? StorageError)?.code == .queryTooSlow && "\(error)".contains("FROM system.numbers")
            }
            // A read within its limit answers as before.
            let rows = try await client.rows("SELECT count() AS n FROM numbers(1000)", timeLimit: .seconds(1))
            #expect(rows.first?["n"] == .int(1000))
        }
    }

    @Test func aRowThatDoesNotFitTheTableFailsTheWholeInsert() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            try await client.execute("CREATE TABLE typed (id UInt64, name String) ENGINE = MergeTree ORDER BY id")
            await #expect {
                try await client.insert(
                    into: "typed",
                    rows: [
                        ["id": .int(1), "name": .string("ok")], ["id": .string("not a number"), "name": .string("x")],
                    ])
            } throws: { error in
                (error as? StorageError)?.code == .database && "\(error)".contains("INSERT INTO typed")
            }
            #expect(try await client.rows("SELECT count() AS n FROM typed").first?["n"] == .int(0))
        }
    }
}

@Suite("ClickHouse client without a server")
struct ClickHouseClientFailureTests {
    @Test func aClosedPortIsUnavailable() async throws {
        let server = try TestHTTPServer()
        let port = server.port
        server.stop()
        let client = ClickHouseClient(
            url: try ClickHouseURL("clickhouse://127.0.0.1:\(port)/events"), logger: PostgresTestEnvironment.logger)
        await #expect {
            try await client.ping()
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .unavailable && error.message.contains("127.0.0.1:\(port)")
        }
        await client.close()
    }

    /// A statement that gets no answer in time is unavailable (a retry may succeed).
    @Test func aServerThatDoesNotAnswerTimesOut() async throws {
        let gate = Gate()
        let server = try TestHTTPServer { _ in
            await gate.pass()
            return TestHTTPResponse(status: 200)
        }
        let client = ClickHouseClient(
            url: try ClickHouseURL("http://127.0.0.1:\(server.port)/events"), timeout: .milliseconds(300),
            logger: PostgresTestEnvironment.logger)
        await #expect {
            try await client.execute("SELECT 1")
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .unavailable && error.message.contains("did not answer `SELECT 1` within")
        }
        // An insight's read past its own time limit is too slow: the same query would be again.
        await #expect {
            try await client.forEachRow("SELECT 2", timeLimit: .milliseconds(300)) { _ in }
        } throws: { error in
            guard let error = error as? StorageError else { return false }
            return error.code == .queryTooSlow && error.message.contains("did not answer `SELECT 2` within")
        }
        gate.open()
        await client.close()
        server.stop()
    }

    /// ClickHouse's answer when `max_execution_time` stopped a query, as 18.16 and current
    /// releases word it.
    @Test(arguments: [
        "Code: 159, e.displayText() = DB::Exception: Timeout exceeded: elapsed 60.000123 seconds, maximum: 60, e.what() = DB::Exception",
        "Code: 159. DB::Exception: Timeout exceeded: elapsed 60.000123 seconds, maximum: 60. (TIMEOUT_EXCEEDED) (version 24.8.4.13)",
    ])
    func aQueryClickHouseStoppedAtItsLimitIsTooSlow(exception: String) async throws {
        let server = try TestHTTPServer { _ in TestHTTPResponse(status: 500, body: Array(exception.utf8)) }
        let client = ClickHouseClient(
            url: try ClickHouseURL("http://127.0.0.1:\(server.port)/events"), logger: PostgresTestEnvironment.logger)
        await #expect {
            try await client.rows("SELECT 1", timeLimit: .seconds(60))
        } throws: { error in
            (error as? StorageError)?.code == .queryTooSlow && "\(error)".contains("Timeout exceeded")
        }
        // Without a time limit of its own (ingest's statements) the same answer may be retried.
        await #expect {
            try await client.execute("SELECT 1")
        } throws: { error in
            (error as? StorageError)?.code == .unavailable
        }
        await client.close()
        server.stop()
    }

    @Test func aProxyInFrontThatIsUnavailableMayBeRetried() async throws {
        let server = try TestHTTPServer { _ in TestHTTPResponse(status: 503, body: Array("starting".utf8)) }
        let client = ClickHouseClient(
            url: try ClickHouseURL("http://127.0.0.1:\(server.port)/events"), logger: PostgresTestEnvironment.logger)
        await #expect {
            try await client.execute("SELECT 1")
        } throws: { error in
            (error as? StorageError)?.code == .unavailable && "\(error)".contains("HTTP 503): starting")
        }
        await client.close()
        server.stop()
    }
}
