import Foundation
import TouchpointTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP connection to 127.0.0.1 driven byte by byte, as a slow or hostile client drives one:
/// no HTTP library in between to complete, retry or time out a request on its own.
final class RawConnection {
    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = try Self.connectedSocket(port: port)
    }

    /// A TCP socket connected to 127.0.0.1:`port`.
    static func connectedSocket(port: Int) throws -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw TestFailure("connect to 127.0.0.1:\(port): errno \(errno)")
        }
        return descriptor
    }

    deinit { close(descriptor) }

    /// Sends `text`; false when the server has already closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { buffer in
            #if canImport(Glibc)
            Glibc.send(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            #else
            Darwin.send(descriptor, buffer.baseAddress, buffer.count, 0)
            #endif
        }
        return sent == bytes.count
    }

    /// What the server sends until it closes the connection, or nil when it has not closed it
    /// within `limit` (a generous bound, so a server that never closes fails the test instead of
    /// hanging it).
    func readUntilClosed(limit: Duration = .seconds(20)) -> String? {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            guard let chunk = read(waiting: .milliseconds(200)) else { continue }
            if chunk.isEmpty { return String(decoding: received, as: UTF8.self) }
            received += chunk
        }
        return nil
    }

    /// Reads what has arrived within `wait`: nil when nothing did, empty when the server closed
    /// the connection (or reset it).
    func read(waiting wait: Duration) -> [UInt8]? {
        var descriptors = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&descriptors, 1, milliseconds) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return [] }
        return Array(buffer.prefix(count))
    }

    /// Reads one response: its head, then `Content-Length` bytes of body; nil when the connection
    /// closes first or nothing complete arrives within `limit`.
    func readResponse(limit: Duration = .seconds(20)) -> String? {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = text[..<end.lowerBound].lowercased()
                let length =
                    head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if text.utf8.count - text[..<end.upperBound].utf8.count >= length { return text }
            }
            guard let chunk = read(waiting: .milliseconds(200)) else { continue }
            if chunk.isEmpty { return nil }
            received += chunk
        }
        return nil
    }
}
