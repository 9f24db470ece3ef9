import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import TouchpointCore

/// ClickHouse over its HTTP interface: statements, rows read as `JSONEachRow`, and batched inserts
/// sent as gzipped `JSONEachRow`.
///
/// Every request names the database of its ``ClickHouseURL`` and runs with `wait_end_of_query=1`,
/// so a statement that fails answers an HTTP error carrying ClickHouse's exception rather than a
/// `200` cut short. Failures are ``StorageError``s: `database` with ClickHouse's own text and the
/// statement that failed (a bad statement, a missing table), `unavailable` when the server does
/// not answer within ``timeout`` or cannot be reached (the caller may retry). A read given a
/// `timeLimit` of its own (an insight's query) that runs past it fails with `queryTooSlow`
/// instead: asked again, it would run as long.
///
/// The SQL is text: ClickHouse 18.16 has no bound parameters over HTTP, so statements are
/// ``ClickHouseSQL``, which quotes every value interpolated into them.
final class ClickHouseClient: Sendable {
    /// The server and database.
    let url: ClickHouseURL
    /// How long one request may take, from sending to its last byte; the server is asked to stop
    /// a query at the same limit (`max_execution_time`).
    let timeout: Duration
    /// How long an insight's read may take (the `timeLimit` ``ClickHouseInsights`` gives its reads).
    let queryTimeLimit: Duration
    /// The most a response may hold (rows of a query).
    let maximumResponseBytes: Int
    /// ClickHouse settings sent with every read (`SELECT`), such as a limit on the rows it may
    /// read (`max_rows_to_read`).
    let readSettings: [(String, String)]
    private let http: HTTPClient
    let logger: Logger

    /// Opens a client; it connects on the first request.
    /// - Parameters:
    ///   - url: the server and database.
    ///   - timeout: how long one request may take.
    ///   - queryTimeLimit: how long an insight's read may take.
    ///   - maximumResponseBytes: the most a response may hold.
    ///   - readSettings: ClickHouse settings sent with every read.
    ///   - logger: where requests that failed are logged.
    init(
        url: ClickHouseURL, timeout: Duration = .seconds(30), queryTimeLimit: Duration = .seconds(60),
        maximumResponseBytes: Int = 256 << 20, readSettings: [(String, String)] = [], logger: Logger
    ) {
        self.url = url
        self.timeout = timeout
        self.queryTimeLimit = queryTimeLimit
        self.maximumResponseBytes = maximumResponseBytes
        self.readSettings = readSettings
        self.logger = logger
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(5)))
        // ClickHouse closes an idle connection after 3 s (`keep_alive_timeout`): a pooled
        // connection is dropped before that, so a request never goes out on one being closed.
        configuration.connectionPool.idleTimeout = .seconds(2)
        http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// Runs a statement that returns no rows (`CREATE`, `ALTER`, `DROP`, `INSERT … SELECT`).
    func execute(_ sql: ClickHouseSQL, timeout: Duration? = nil) async throws {
        _ = try await send(sql: sql.text, body: Array(sql.text.utf8), settings: [], gzip: false, timeout: timeout)
    }

    /// The rows of a `SELECT`, each as an object of column → value. 64-bit integers arrive as
    /// numbers; dates and times as ClickHouse writes them (`2024-01-31 10:00:00`).
    /// - Parameters:
    ///   - sql: a `SELECT` without a `FORMAT` clause.
    ///   - external: tables sent with the query, which it reads by their names (ClickHouse's
    ///     external data): small lookups the server does not keep, such as the merges of people.
    ///   - timeLimit: how long the read may take instead of ``timeout``; past it the read fails
    ///     with `queryTooSlow` (nil: ``timeout``, and `unavailable`).
    func rows(_ sql: ClickHouseSQL, external: [ClickHouseExternalTable] = [], timeLimit: Duration? = nil) async throws
        -> [[String: JSONValue]]
    {
        let body = try await answer(sql, format: "JSONEachRow", external: external, timeLimit: timeLimit)
        var rows: [[String: JSONValue]] = []
        try Self.forEachLine(of: body) { line in
            do {
                guard case .object(let row) = try JSONParser.parse(Array(line)) else {
                    throw JSONParseError(offset: 0, reason: "a row is not an object")
                }
                rows.append(row)
            } catch {
                throw StorageError(
                    code: .corruptRow,
                    message: "ClickHouse at \(url) answered `\(Self.excerpt(sql.text))` with \(error)")
            }
        }
        return rows
    }

    /// Calls `body` with a reader over the rows of a `SELECT` in its `RowBinary` form, until
    /// every row is read: for answers of many rows (a funnel's step events), read in place, with
    /// no text to parse and no string, array or reference count made per row or field. `body`
    /// reads one row's values each call, in the columns' order; the `SELECT` casts each column to
    /// the type it is read as (`toUInt64(…)`, `toString(…)`), since the bytes do not say.
    /// Parameters as ``rows(_:external:timeLimit:)``.
    func forEachRow(
        _ sql: ClickHouseSQL, external: [ClickHouseExternalTable] = [], timeLimit: Duration? = nil,
        _ body: (inout RowBinaryReader) throws -> Void
    ) async throws {
        let answer = try await answerBuffer(sql, format: "RowBinary", external: external, timeLimit: timeLimit)
        let url = self.url
        try answer.withUnsafeReadableBytes { bytes in
            var reader = RowBinaryReader(bytes)
            while !reader.isAtEnd {
                let start = reader.offset
                try body(&reader)
                guard reader.offset > start, !reader.isTruncated else {
                    throw StorageError(
                        code: .corruptRow,
                        message:
                            "ClickHouse at \(url) answered `\(Self.excerpt(sql.text))` with a row that ends early or "
                            + "holds other columns than asked, at byte \(start) of \(bytes.count)")
                }
            }
        }
    }

    /// Reads the values of a `RowBinary` answer in order: numbers as their little-endian bytes,
    /// strings as their length (LEB128) then their bytes. It points into the answer, so it is
    /// valid only inside the call it is handed to. Past the end it reads zeros and empty strings
    /// and sets ``isTruncated``.
    struct RowBinaryReader {
        private let bytes: UnsafeRawBufferPointer
        /// Where the next value starts.
        private(set) var offset = 0
        /// Whether a read went past the end of the answer.
        private(set) var isTruncated = false

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        /// Whether every byte has been read.
        var isAtEnd: Bool { offset >= bytes.count }

        /// The next `size` bytes' place, or nil (and ``isTruncated``) when fewer remain.
        private mutating func take(_ size: Int) -> Int? {
            guard size <= bytes.count - offset else {
                isTruncated = true
                offset = bytes.count
                return nil
            }
            defer { offset += size }
            return offset
        }

        private mutating func fixed<Value: FixedWidthInteger>(_: Value.Type) -> Value {
            guard let start = take(MemoryLayout<Value>.size) else { return 0 }
            return Value(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: Value.self))
        }

        mutating func uint8() -> UInt8 { fixed(UInt8.self) }
        mutating func uint16() -> UInt16 { fixed(UInt16.self) }
        mutating func uint64() -> UInt64 { fixed(UInt64.self) }
        mutating func int64() -> Int64 { fixed(Int64.self) }

        /// A `String` column's value (its bytes as UTF-8, invalid ones replaced).
        mutating func string() -> String {
            var length = 0
            var shift = 0
            while true {
                let byte = uint8()
                guard !isTruncated, shift < 63 else {
                    isTruncated = true
                    return ""
                }
                length |= Int(byte & 0x7F) << shift
                if byte & 0x80 == 0 { break }
                shift += 7
            }
            guard length >= 0, let start = take(length) else { return "" }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<start + length]), as: UTF8.self)
        }
    }

    /// Calls `body` with each non-empty line of `bytes`, without its newline.
    private static func forEachLine(of bytes: [UInt8], _ body: (ArraySlice<UInt8>) throws -> Void) rethrows {
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            if end > start { try body(bytes[start..<end]) }
            start = end + 1
        }
    }

    /// The answer to a `SELECT` in `format`, with `external` tables sent along.
    private func answer(
        _ sql: ClickHouseSQL, format: String, external: [ClickHouseExternalTable], timeLimit: Duration?
    ) async throws -> [UInt8] {
        Array(buffer: try await answerBuffer(sql, format: format, external: external, timeLimit: timeLimit))
    }

    /// ``answer(_:format:external:timeLimit:)`` as the buffer it arrived in.
    private func answerBuffer(
        _ sql: ClickHouseSQL, format: String, external: [ClickHouseExternalTable], timeLimit: Duration?
    ) async throws -> ByteBuffer {
        let text = sql.text + "\nFORMAT \(format)"
        var settings = [("output_format_json_quote_64bit_integers", "0")] + readSettings
        let answer: ByteBuffer
        if external.isEmpty {
            answer = try await send(
                sql: sql.text, body: Array(text.utf8), settings: settings, gzip: false, timeLimit: timeLimit)
        } else {
            // With external data the body is a form of the tables; the query goes in the URL.
            let boundary = "touchpoint-\(UInt64.random(in: 0...UInt64.max))"
            settings.append(("query", text))
            for table in external {
                settings.append(("\(table.name)_structure", table.structure))
                settings.append(("\(table.name)_format", "JSONEachRow"))
            }
            answer = try await send(
                sql: sql.text, body: ClickHouseExternalTable.form(external, boundary: boundary), settings: settings,
                gzip: false, contentType: "multipart/form-data; boundary=\(boundary)", timeLimit: timeLimit)
        }
        return answer
    }

    /// Inserts rows in one request: `lines` is `JSONEachRow` (one JSON object per line, members
    /// named as the table's columns), sent gzipped. One insert of up to a million rows is written
    /// by ClickHouse as one part, all or nothing.
    /// - Parameters:
    ///   - table: the table, a plain name in the client's database.
    ///   - lines: the rows.
    func insert(into table: String, jsonLines lines: [UInt8]) async throws {
        guard !lines.isEmpty else { return }
        let statement: ClickHouseSQL = "INSERT INTO \(identifier: table) FORMAT JSONEachRow"
        let compressed: [UInt8]
        do {
            compressed = try Gzip.compress(lines, level: .fastest)
        } catch {
            throw StorageError(code: .database, message: "cannot compress an insert into \(table): \(error)")
        }
        _ = try await send(
            sql: statement.text, body: compressed,
            settings: [("query", statement.text)], gzip: true)
    }

    /// Inserts `rows` (objects of column → value) in one request; see ``insert(into:jsonLines:)``.
    func insert(into table: String, rows: [[String: JSONValue]]) async throws {
        var lines: [UInt8] = []
        var writer = JSONWriter()
        for row in rows {
            // A writer of its own per row: `JSONEachRow` has no commas between rows.
            writer.reset()
            writer.value(.object(row))
            lines += writer.bytes
            lines.append(UInt8(ascii: "\n"))
        }
        try await insert(into: table, jsonLines: lines)
    }

    /// Succeeds when the server answers a query.
    func ping() async throws {
        let rows = try await rows("SELECT 1 AS ok")
        guard rows.first?["ok"]?.intValue == 1 else {
            throw StorageError(code: .unavailable, message: "ClickHouse at \(url) answered SELECT 1 with \(rows)")
        }
    }

    /// The server's version, e.g. `18.16.1`.
    func version() async throws -> String {
        try await rows("SELECT version() AS version").first?["version"]?.stringValue ?? ""
    }

    /// Closes the connections.
    func close() async {
        do {
            try await http.shutdown()
        } catch {
            logger.warning("closing the ClickHouse client failed", metadata: ["error": "\(error)"])
        }
    }

    // MARK: - One request

    private func send(
        sql: String, body: [UInt8], settings: [(String, String)], gzip: Bool,
        contentType: String = "text/plain; charset=utf-8", timeout: Duration? = nil, timeLimit: Duration? = nil
    ) async throws -> ByteBuffer {
        let timeout = timeLimit ?? timeout ?? self.timeout
        // Past its deadline a read with a time limit of its own is too slow, not unanswered.
        let late: StorageError.Code = timeLimit == nil ? .unavailable : .queryTooSlow
        let seconds = max(1, timeout.components.seconds)
        var query: [URLQueryItem] = [
            URLQueryItem(name: "database", value: url.database),
            URLQueryItem(name: "wait_end_of_query", value: "1"),
            URLQueryItem(name: "max_execution_time", value: String(seconds)),
        ]
        query += settings.map { URLQueryItem(name: $0.0, value: $0.1) }
        var components = URLComponents()
        components.queryItems = query
        // `+` is a space in a query string: ClickHouse reads it so.
        let encoded = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        guard encoded.utf8.count + 2 < Self.maximumURILength else {
            throw URITooLong(length: encoded.utf8.count + 2)
        }
        var request = HTTPClientRequest(url: "\(url.endpoint)/?\(encoded)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        if gzip { request.headers.add(name: "Content-Encoding", value: "gzip") }
        if url.username != "default" || url.password != nil {
            let credentials = Data("\(url.username):\(url.password ?? "")".utf8).base64EncodedString()
            request.headers.add(name: "Authorization", value: "Basic \(credentials)")
        }
        request.body = .bytes(ByteBuffer(bytes: body))

        let response: HTTPClientResponse
        let data: ByteBuffer
        do {
            let amount = TimeAmount.nanoseconds(
                timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
            response = try await http.execute(request, deadline: .now() + amount)
            data = try await response.body.collect(upTo: maximumResponseBytes)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw StorageError(
                code: late, message: "ClickHouse at \(url) did not answer `\(Self.excerpt(sql))` within \(timeout)")
        } catch let error as NIOTooManyBytesError {
            throw StorageError(
                code: .database,
                message:
                    "ClickHouse at \(url) answered `\(Self.excerpt(sql))` with more than \(error.maxBytes ?? maximumResponseBytes) bytes"
            )
        } catch {
            throw StorageError(
                code: .unavailable,
                message: "ClickHouse at \(url) cannot be reached for `\(Self.excerpt(sql))`: \(error)")
        }
        guard response.status == .ok else {
            let text = Self.exceptionText(String(buffer: data))
            logger.warning(
                "ClickHouse refused a statement",
                metadata: [
                    "status": "\(response.status.code)", "statement": "\(Self.excerpt(sql))", "error": "\(text)",
                ])
            // ClickHouse stopped the query at `max_execution_time` (code 159, TIMEOUT_EXCEEDED): as
            // late as no answer by the deadline. 5xx that are not exceptions (a proxy in front, a
            // server starting) may pass; the rest is the statement's fault and will fail again.
            let stopped = text.hasPrefix("Code: 159,") || text.hasPrefix("Code: 159.")
            let code: StorageError.Code =
                stopped
                ? late
                : response.status == .serviceUnavailable || response.status == .badGateway
                    || response.status == .gatewayTimeout ? .unavailable : .database
            throw StorageError(
                code: code,
                message: "ClickHouse at \(url) failed `\(Self.excerpt(sql))` (HTTP \(response.status.code)): \(text)")
        }
        return data
    }

    /// The longest request target ClickHouse 18.16's HTTP server reads (its HTTP library's limit;
    /// current releases read up to `http_max_uri_size`, 1 MiB): a query with external tables
    /// travels in the URL, since the body holds the tables.
    static let maximumURILength = 16_384

    /// A request whose target (path and query string) is longer than ``maximumURILength``: not
    /// sent, since the server would drop the connection without an answer.
    struct URITooLong: Error, CustomStringConvertible {
        let length: Int
        var description: String {
            "a ClickHouse request of \(length) characters in its URL, over the \(ClickHouseClient.maximumURILength) ClickHouse reads"
        }
    }

    /// ClickHouse's exception without the decoration 18.16 adds (`e.displayText() = `,
    /// `, e.what() = DB::Exception`).
    static func exceptionText(_ body: String) -> String {
        var text = body.trimmingCharacters(in: .whitespacesAndNewlines)
        text = text.replacingOccurrences(of: "e.displayText() = ", with: "")
        if let range = text.range(of: ", e.what() = ") { text = String(text[..<range.lowerBound]) }
        return text.isEmpty ? "no message" : String(text.prefix(2000))
    }

    /// The start of a statement, on one line, for errors and logs.
    static func excerpt(_ sql: String) -> String {
        let line = sql.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: " ")
        return line.count > 160 ? String(line.prefix(160)) + "…" : line
    }
}

/// A table sent with a query (ClickHouse's external data, read by the query as `name`): its
/// columns as ClickHouse declares them (`anonymous_id String, merged String`) and its rows as
/// `JSONEachRow`.
struct ClickHouseExternalTable: Sendable {
    /// The name the query reads it by: letters, digits and `_`.
    var name: String
    /// Its columns: `name Type, …`.
    var structure: String
    /// One JSON object per line, members named as the columns.
    var rows: [UInt8]

    /// The tables as a `multipart/form-data` body, a part per table named as the table.
    static func form(_ tables: [ClickHouseExternalTable], boundary: String) -> [UInt8] {
        var body: [UInt8] = []
        for table in tables {
            precondition(ClickHouseURL.isIdentifier(table.name), "a table name is letters, digits and _")
            body += Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(table.name)\"; filename=\"\(table.name)\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                    .utf8)
            body += table.rows
            body += Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return body
    }
}
