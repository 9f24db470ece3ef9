import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

@Suite("ClickHouse TabSeparated rows")
struct ClickHouseTabSeparatedTests {
    /// The rows of `text` as arrays of their fields' bytes.
    static func rows(_ text: String) -> [[[UInt8]]] {
        var rows: [[[UInt8]]] = []
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            ClickHouseClient.TabSeparatedRow.forEach(in: bytes) { row in
                rows.append((0..<row.count).map { Array(row[$0]) })
            }
        }
        return rows
    }

    @Test func fieldsSplitAtTabsAndRowsAtNewlines() {
        let wide = (0..<20).map(String.init).joined(separator: "\t")
        let rows = Self.rows("a\tbc\t\n\n\tx\n\(wide)\nlast")
        #expect(
            rows.map { $0.map { String(decoding: $0, as: UTF8.self) } } == [
                ["a", "bc", ""], ["", "x"], (0..<20).map(String.init), ["last"],
            ])
        #expect(Self.rows("").isEmpty)
        #expect(Self.rows("\n\n").isEmpty)
    }

    @Test func integersAndUnsignedIntegers() {
        func parse(_ text: String) -> (Int64?, UInt64?) {
            Array(text.utf8).withUnsafeBufferPointer {
                (ClickHouseClient.integer($0), ClickHouseClient.unsignedInteger($0))
            }
        }
        #expect(parse("0") == (0, 0))
        #expect(parse("-42") == (-42, nil))
        #expect(parse("9223372036854775807") == (Int64.max, UInt64(Int64.max)))
        #expect(parse("-9223372036854775807") == (-Int64.max, nil))
        #expect(parse("-9223372036854775808") == (Int64.min, nil))
        #expect(parse("-9223372036854775809") == (nil, nil))
        #expect(parse("18446744073709551615") == (nil, UInt64.max))
        #expect(parse("18446744073709551616") == (nil, nil))
        #expect(parse("99999999999999999999") == (nil, nil))
        #expect(parse("") == (nil, nil))
        #expect(parse("-") == (nil, nil))
        #expect(parse("1e3") == (nil, nil))
        #expect(parse(" 1") == (nil, nil))
    }

    @Test func escapesAreUndone() {
        let text = #"tab\tnew\nback\\quote\'nul\0"#
        let value = Array(text.utf8).withUnsafeBufferPointer { ClickHouseClient.unescaped($0) }
        #expect(value == "tab\tnew\nback\\quote'nul\u{0}")
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
                "SELECT id, name, toUnixTimestamp(at) AS at, score FROM things WHERE name = \(ClickHouseClient.literal(awkward))"
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

    @Test(arguments: [
        ("plain", "'plain'"), ("it's", "'it\\'s'"), ("a\\b", "'a\\\\b'"), ("nul\0", "'nul\\0'"),
    ])
    func literalsAreQuoted(value: String, literal: String) {
        #expect(ClickHouseClient.literal(value) == literal)
    }
}
