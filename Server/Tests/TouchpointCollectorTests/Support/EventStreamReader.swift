import Foundation
import TouchpointTesting

/// A blocking HTTP/1.1 client for one streaming response (server-sent events): it sends a GET
/// and reads the response as it arrives. Call its methods through `onOwnThread`.
final class EventStreamReader: @unchecked Sendable {
    // Safe: used by one thread at a time (each call runs on its own thread, one after the other).
    private let connection: RawConnection
    private(set) var received = ""
    private(set) var closed = false

    init(port: Int, path: String, headers: [(String, String)]) throws {
        connection = try RawConnection(port: port)
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        try connection.send(request)
    }

    /// Reads until the text received so far contains `needle`, the connection closes, or `seconds` pass.
    /// - Returns: whether `needle` arrived.
    func read(until needle: String, seconds: Double) -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !received.contains(needle) {
            guard !closed, ContinuousClock.now < deadline else { return false }
            guard let chunk = connection.read(waiting: .milliseconds(200)) else { continue }
            if chunk.isEmpty {
                closed = true
            } else {
                received += String(decoding: chunk, as: UTF8.self)
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
