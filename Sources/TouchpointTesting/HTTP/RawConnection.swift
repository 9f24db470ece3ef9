#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A bare TCP connection to 127.0.0.1 for sending hand-made HTTP bytes no HTTP client would send
/// (half a request line, a byte at a time, chunked bodies, pipelining, `Expect: 100-continue`,
/// malformed requests) and reading exactly what the server answers.
///
/// No HTTP library sits in between to complete, retry or time out a request on its own. Every
/// read gives up after ``timeout``, so a server that never answers fails the test instead of
/// hanging it. Blocking: call it from a test's own task, or through ``onOwnThread(_:)`` when
/// other work must keep running meanwhile.
///
/// ```swift
/// let connection = try RawConnection(port: server.port)
/// try connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
/// let response = try connection.readResponse()
/// #expect(response.status == 200)
/// #expect(connection.readUntilClosed() == "", "closed after the answer, with nothing more")
/// ```
public final class RawConnection {
    /// One HTTP response as it arrived.
    public struct Response: Sendable, Hashable {
        /// The status code.
        public var status: Int
        /// The status line and header fields as sent, without the blank line that ends them.
        public var head: String
        /// Header fields with lowercased names; the last value wins for repeated names.
        public var headers: [String: String]
        /// The body, with chunked transfer coding removed.
        public var body: [UInt8]

        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Why connecting, sending or reading failed: what was being done and what went wrong.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// For example `connect to 127.0.0.1:8080: errno 111` or `no response within 20.0 seconds`.
        public let description: String

        init(_ description: String) { self.description = description }
    }

    /// The port it is connected to.
    public let port: Int
    /// How long any one read waits for the server.
    public let timeout: Duration
    /// Whether the server reset the connection (a TCP RST) instead of closing it in order; known
    /// once a read saw the end of the stream.
    public private(set) var wasReset = false

    private let descriptor: Int32
    /// Bytes received and not yet returned by a read.
    private var buffer: [UInt8] = []
    private var ended = false

    /// Connects to 127.0.0.1:`port`.
    /// - Parameters:
    ///   - port: the server's port.
    ///   - timeout: the longest any one read waits (20 s by default: generous, since a passing test
    ///     returns as soon as the bytes arrive).
    /// - Throws: ``Failure`` when the connection is refused.
    public init(port: Int, timeout: Duration = .seconds(20)) throws(Failure) {
        guard let port16 = UInt16(exactly: port), port16 > 0 else { throw Failure("\(port) is not a port (1…65535)") }
        guard let descriptor = Socket.connect(port: port16) else {
            throw Failure("connect to 127.0.0.1:\(port): errno \(errno)")
        }
        #if canImport(Darwin)
        // A write to a closed connection fails with EPIPE instead of killing the test process.
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        self.port = port
        self.timeout = timeout
        self.descriptor = descriptor
    }

    /// Connects to 127.0.0.1:`port` (a ``TestHTTPServer/port``, for example).
    /// - Throws: ``Failure`` when the connection is refused.
    public convenience init(port: UInt16, timeout: Duration = .seconds(20)) throws(Failure) {
        try self.init(port: Int(port), timeout: timeout)
    }

    deinit { Socket.close(descriptor) }

    /// Sends `text` as UTF-8.
    /// - Throws: ``Failure`` when the server has closed the connection.
    public func send(_ text: String) throws(Failure) { try send(Array(text.utf8)) }

    /// Sends `bytes`.
    /// - Throws: ``Failure`` when the server has closed the connection.
    public func send(_ bytes: [UInt8]) throws(Failure) {
        guard Socket.sendAll(descriptor, bytes[...]) else {
            throw Failure("sending \(bytes.count) bytes to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    /// Reads what arrives within `wait`.
    /// - Returns: the bytes; empty when the server has closed (or reset) the connection; nil when
    ///   nothing arrived in time.
    public func read(waiting wait: Duration) -> [UInt8]? {
        if buffer.isEmpty && !ended { receive(before: ContinuousClock.now + wait) }
        if buffer.isEmpty { return ended ? [] : nil }
        defer { buffer.removeAll() }
        return buffer
    }

    /// Reads until the server closes the connection.
    /// - Returns: everything it sent until then (empty when it closed without a word), or nil when
    ///   it has not closed within ``timeout``.
    public func readUntilClosed() -> String? {
        let deadline = ContinuousClock.now + timeout
        while !ended {
            guard receive(before: deadline) else { return nil }
        }
        defer { buffer.removeAll() }
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Reads one response: its head, then its body as the head frames it (`Content-Length`,
    /// chunked, or up to the end of the stream).
    /// - Parameter bodyless: true for the answer to a `HEAD`, which announces a length but has no body.
    /// - Throws: ``Failure`` when the connection ends first, the response is malformed, or nothing
    ///   complete arrives within ``timeout``.
    public func readResponse(bodyless: Bool = false) throws(Failure) -> Response {
        let deadline = ContinuousClock.now + timeout
        let headEnd = try readUntil([13, 10, 13, 10], before: deadline)
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/"), let status = Int(statusLine[1]) else {
            throw Failure("not an HTTP status line: \(head.prefix(200))")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...]).trimmed
        }
        var response = Response(status: status, head: head, headers: headers, body: [])
        if bodyless || (100..<200).contains(status) || status == 204 || status == 304 { return response }
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            response.body = try readChunkedBody(before: deadline)
        } else if let text = headers["content-length"] {
            guard let length = Int(text), length >= 0 else { throw Failure("bad Content-Length: \(text)") }
            while buffer.count < length {
                guard try receiveOrThrow(before: deadline) else {
                    throw Failure("the body ended after \(buffer.count) of \(length) bytes")
                }
            }
            response.body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else {
            while try receiveOrThrow(before: deadline) {}
            response.body = buffer
            buffer.removeAll()
        }
        return response
    }

    // MARK: Internals

    private func readChunkedBody(before deadline: ContinuousClock.Instant) throws(Failure) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let lineEnd = try readUntil([13, 10], before: deadline)
            let line = String(decoding: buffer[..<lineEnd], as: UTF8.self)
            buffer.removeFirst(lineEnd + 2)
            let sizeText = line.split(separator: ";", maxSplits: 1).first.map { String($0).trimmed } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else { throw Failure("bad chunk size: \(line)") }
            if size == 0 {
                // Trailer fields, if any, then the blank line.
                while true {
                    let end = try readUntil([13, 10], before: deadline)
                    buffer.removeFirst(end + 2)
                    if end == 0 { return body }
                }
            }
            while buffer.count < size + 2 {
                guard try receiveOrThrow(before: deadline) else { throw Failure("a chunk was cut short") }
            }
            body += buffer[..<size]
            buffer.removeFirst(size + 2)
        }
    }

    /// The offset of `pattern` in the buffer, reading more until it arrives.
    private func readUntil(_ pattern: [UInt8], before deadline: ContinuousClock.Instant) throws(Failure) -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= pattern.count {
                for start in searchFrom...(buffer.count - pattern.count)
                where buffer[start..<(start + pattern.count)].elementsEqual(pattern) {
                    return start
                }
                searchFrom = buffer.count - pattern.count + 1
            }
            guard try receiveOrThrow(before: deadline) else {
                throw Failure("the connection ended before a complete response head or chunk line")
            }
        }
    }

    /// Reads more bytes into the buffer.
    /// - Returns: true when bytes arrived, false at the end of the stream.
    /// - Throws: ``Failure`` when nothing arrived before `deadline`.
    private func receiveOrThrow(before deadline: ContinuousClock.Instant) throws(Failure) -> Bool {
        let count = buffer.count
        guard receive(before: deadline) else { throw Failure("no response within \(timeout)") }
        return buffer.count > count
    }

    /// Waits for the socket until `deadline`, then reads what is there into the buffer (or notes
    /// the end of the stream).
    /// - Returns: false when nothing happened before `deadline`.
    @discardableResult
    private func receive(before deadline: ContinuousClock.Instant) -> Bool {
        if ended { return true }
        let remaining = deadline - ContinuousClock.now
        let milliseconds = max(
            0, remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)
        guard Socket.waitReadable(descriptor, milliseconds: Int32(clamping: milliseconds)) else { return false }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = Socket.receive(descriptor, into: &chunk)
        if count > 0 {
            buffer += chunk[..<count]
        } else {
            // The end of the stream, or an error that ends it (a reset, most often).
            if count < 0 && errno == ECONNRESET { wasReset = true }
            ended = true
        }
        return true
    }
}

extension String {
    fileprivate var trimmed: String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return String(text)
    }
}
