import Foundation

@testable import TouchpointTesting

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A bare TCP connection to 127.0.0.1 for sending hand-made HTTP bytes (chunked bodies,
/// pipelining, `Expect: 100-continue`, malformed requests) that no HTTP client would send.
/// Every read gives up after a few seconds, so a test cannot hang on it.
final class RawConnection {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(port: UInt16, timeout: Int = 5) throws {
        guard let descriptor = Socket.connect(port: port) else {
            throw Failure(description: "connect to port \(port) failed: errno \(errno)")
        }
        self.descriptor = descriptor
        Socket.setTimeouts(descriptor, seconds: Double(timeout))
    }

    deinit { close(descriptor) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { throw Failure(description: "write failed") }
            offset += written
        }
    }

    /// Reads one response framed by `Content-Length` (or none: up to the end of the stream).
    /// - Parameter bodyless: true for the answer to a `HEAD`, which announces a length but has no body.
    func readResponse(bodyless: Bool = false) throws -> Response {
        let headEnd = try readUntil([13, 10, 13, 10])
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line in \(head)")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        if status == 100 || bodyless { return Response(status: status, headers: headers, body: []) }
        let length = headers["content-length"].flatMap { Int($0) }
        if let length {
            while buffer.count < length { guard try fill() else { throw Failure(description: "body cut short") } }
            let body = Array(buffer[..<length])
            buffer.removeFirst(length)
            return Response(status: status, headers: headers, body: body)
        }
        while try fill() {}
        defer { buffer.removeAll() }
        return Response(status: status, headers: headers, body: buffer)
    }

    /// Whether the server closed the connection (reads end of stream or a reset) within the timeout.
    func isClosedByPeer() -> Bool {
        var scratch = [UInt8](repeating: 0, count: 256)
        let count = scratch.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    /// The errno of the next read, 0 when it returned data or end of stream.
    func readErrno() -> Int32 {
        var scratch = [UInt8](repeating: 0, count: 256)
        let count = scratch.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        return count < 0 ? errno : 0
    }

    private func readUntil(_ pattern: [UInt8]) throws -> Int {
        while true {
            if let index = find(pattern) { return index }
            guard try fill() else { throw Failure(description: "connection closed before \(pattern)") }
        }
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for start in 0...(buffer.count - pattern.count) where Array(buffer[start..<(start + pattern.count)]) == pattern
        {
            return start
        }
        return nil
    }

    /// Reads more bytes; false at end of stream. Throws on a timeout or error.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 { throw Failure(description: "read failed: errno \(errno)") }
        if count == 0 { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }
}
