import Foundation
import TouchpointTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking HTTP/1.1 client for one streaming response (server-sent events): it sends a GET
/// and reads the response as it arrives. Call its methods through `onOwnThread`.
final class EventStreamReader: @unchecked Sendable {
    // Safe: used by one thread at a time (each call runs on its own thread, one after the other).
    private var descriptor: Int32 = -1
    private(set) var received = ""
    private(set) var closed = false

    init(port: Int, path: String, headers: [(String, String)]) throws {
        descriptor = try RawConnection.connectedSocket(port: port)
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            throw TestFailure("sending the request failed: errno \(errno)")
        }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Reads until the text received so far contains `needle`, the connection closes, or `seconds` pass.
    /// - Returns: whether `needle` arrived.
    func read(until needle: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(needle) {
            guard !closed, Date() < deadline else { return false }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += String(decoding: buffer[0..<count], as: UTF8.self)
            } else if count == 0 {
                closed = true
            } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                closed = true
            }
        }
        return true
    }

    /// Reads until the server closes the connection or `seconds` pass.
    /// - Returns: whether it closed.
    func waitForClose(seconds: Double) -> Bool {
        _ = read(until: "\u{0}never\u{0}", seconds: seconds)
        return closed
    }
}
