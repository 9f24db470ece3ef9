#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// A blocking HTTP/1.1 client over one keep-alive TCP connection, for load generation and tests.
///
/// Deliberately small and synchronous: `touchpoint loadgen` runs one per client thread, so the
/// measurement is of the server, not of a client framework. Every socket call is bounded by a
/// timeout, so a silent server cannot hang the caller. Never call it on Swift's cooperative
/// threads (it blocks); ``LoadGenerator`` and the tests run it on threads of its own.
public final class HTTPConnection {
    /// A response: status, headers (names lowercased) and body.
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// Header fields with lowercased names; the last value wins for repeated names.
        public var headers: [String: String]
        /// The body bytes.
        public var body: [UInt8]

        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Why a request failed at the transport level.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, e.g. `connect to 127.0.0.1:8080: Connection refused`.
        public let message: String
        public var description: String { message }
    }

    private let host: String
    private let port: Int
    private let timeoutSeconds: Int
    private var descriptor: Int32 = -1
    private var buffer: [UInt8] = []
    private var bufferStart = 0

    /// Creates a connection; it connects on the first request and reconnects when the server closed it.
    /// - Parameters:
    ///   - host: an IPv4 or IPv6 address or a host name.
    ///   - timeoutSeconds: the longest a connect, send or receive may block.
    public init(host: String, port: Int, timeoutSeconds: Int = 30) {
        self.host = host
        self.port = port
        self.timeoutSeconds = timeoutSeconds
    }

    deinit { disconnect() }

    /// Sends one request and reads the whole response.
    /// - Parameters:
    ///   - method: `GET`, `POST`, `PUT`, ….
    ///   - path: the path and query, e.g. `/v1/batch`.
    ///   - headers: extra header fields (`Host`, `Content-Length` and `Connection` are added).
    ///   - body: the request body.
    /// - Throws: ``Failure`` when the connection fails or the response is malformed.
    public func send(method: String, path: String, headers: [(String, String)] = [], body: [UInt8] = []) throws
        -> Response
    {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let request = Array(head.utf8) + body
        // A kept-alive connection may have been closed by the server since the last request: retry once on a fresh one.
        for attempt in 0..<2 {
            let reused = descriptor >= 0
            if !reused { try connect() }
            do {
                try writeAll(request)
                return try readResponse(requestMethod: method)
            } catch let failure as Failure {
                disconnect()
                if !reused || attempt == 1 { throw failure }
            }
        }
        throw Failure(message: "unreachable")
    }

    /// Closes the connection.
    public func disconnect() {
        if descriptor >= 0 { _ = close(descriptor) }
        descriptor = -1
        buffer.removeAll(keepingCapacity: true)
        bufferStart = 0
    }

    // MARK: Socket

    private func connect() throws {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc) || canImport(Musl)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw Failure(message: "resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let socketDescriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard socketDescriptor >= 0 else { continue }
            setTimeouts(socketDescriptor)
            if systemConnect(socketDescriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                var one: Int32 = 1
                _ = setsockopt(
                    socketDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                descriptor = socketDescriptor
                return
            }
            lastError = String(cString: strerror(errno))
            _ = close(socketDescriptor)
        }
        throw Failure(message: "connect to \(host):\(port): \(lastError)")
    }

    private func setTimeouts(_ socketDescriptor: Int32) {
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        let size = socklen_t(MemoryLayout<timeval>.size)
        _ = setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, size)
        _ = setsockopt(socketDescriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, size)
        #if canImport(Darwin)
        var one: Int32 = 1
        _ = setsockopt(socketDescriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                systemSend(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(message: "send: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// Reads more bytes into the buffer; false at end of stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { raw in recv(descriptor, raw.baseAddress, raw.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw Failure(message: "receive: no answer within \(timeoutSeconds) s")
                }
                throw Failure(message: "receive: \(String(cString: strerror(errno)))")
            }
            if count == 0 { return false }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
    }

    // MARK: HTTP

    private func readResponse(requestMethod: String) throws -> Response {
        // Drop what earlier responses consumed; offsets below are from the start of this one.
        buffer.removeFirst(bufferStart)
        bufferStart = 0
        let headEnd = try readUntilHeadEnd()
        let headText = String(decoding: buffer[bufferStart..<headEnd], as: UTF8.self)
        bufferStart = headEnd + 4
        var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { throw Failure(message: "empty response head") }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw Failure(message: "malformed status line")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            headers[name] = String(value)
        }
        var body: [UInt8] = []
        if requestMethod == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status) {
            body = []
        } else if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            body = try readChunked()
        } else if let lengthText = headers["content-length"] {
            guard let length = Int(lengthText), length >= 0 else { throw Failure(message: "bad Content-Length") }
            body = try readExactly(length)
        } else {
            while try fill() {}
            body = Array(buffer[bufferStart...])
            bufferStart = buffer.count
            disconnect()
        }
        if headers["connection"]?.lowercased() == "close" { disconnect() }
        return Response(status: status, headers: headers, body: body)
    }

    private func readUntilHeadEnd() throws -> Int {
        var searchFrom = bufferStart
        while true {
            if buffer.count - searchFrom >= 4 {
                for index in searchFrom...(buffer.count - 4)
                where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13
                    && buffer[index + 3] == 10
                {
                    return index
                }
                searchFrom = buffer.count - 3
            }
            guard try fill() else { throw Failure(message: "connection closed before the response head") }
        }
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count - bufferStart < count {
            guard try fill() else { throw Failure(message: "connection closed inside the response body") }
        }
        let bytes = Array(buffer[bufferStart..<(bufferStart + count)])
        bufferStart += count
        return bytes
    }

    private func readLine() throws -> String {
        while true {
            if let index = buffer[bufferStart...].firstIndex(of: 10), index > bufferStart, buffer[index - 1] == 13 {
                let line = String(decoding: buffer[bufferStart..<(index - 1)], as: UTF8.self)
                bufferStart = index + 1
                return line
            }
            guard try fill() else { throw Failure(message: "connection closed inside a chunked body") }
        }
    }

    private func readChunked() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let sizeLine = try readLine()
            guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
                throw Failure(message: "bad chunk size \"\(sizeLine)\"")
            }
            if size == 0 {
                while try !readLine().isEmpty {}  // trailers
                return body
            }
            body += try readExactly(size)
            _ = try readLine()
        }
    }
}

// Free functions, so the class's own `connect()` and `send(...)` do not shadow the C calls.
private func systemConnect(_ socket: Int32, _ address: UnsafePointer<sockaddr>!, _ length: socklen_t) -> Int32 {
    connect(socket, address, length)
}

private func systemSend(_ socket: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Darwin)
    send(socket, bytes, count, 0)  // SIGPIPE is ignored through SO_NOSIGPIPE
    #else
    send(socket, bytes, count, Int32(MSG_NOSIGNAL))
    #endif
}
