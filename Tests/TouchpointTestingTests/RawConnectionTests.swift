import Foundation
import Testing
import TouchpointTesting

/// The raw client itself: how it frames what a server sends, and how it reports the end of a
/// connection or silence.
struct RawConnectionTests {
    @Test func aChunkedResponseReadsAsItsBody() throws {
        let body = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let server = try TestHTTPServer { _ in TestHTTPResponse(status: 200, body: body, isChunked: true) }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let first = try connection.readResponse()
        #expect(first.headers["transfer-encoding"] == "chunked")
        #expect(first.head.hasPrefix("HTTP/1.1 200"))
        #expect(first.body == body)
        // The chunked body ended exactly at its last chunk: the next response follows.
        #expect(try connection.readResponse().body == body)
    }

    @Test func readsReturnWhatArrivedNothingOrTheEnd() throws {
        let server = try TestHTTPServer { _ in .text("hello") }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        // No request sent, so the server has nothing to say.
        #expect(connection.read(waiting: .milliseconds(20)) == nil)
        try connection.send("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        var received: [UInt8] = []
        while let chunk = connection.read(waiting: .seconds(20)), !chunk.isEmpty { received += chunk }
        let text = String(decoding: received, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"), "\(text)")
        #expect(text.hasSuffix("\r\n\r\nhello"), "\(text)")
        #expect(connection.read(waiting: .seconds(1)) == [], "the end, again")
        #expect(!connection.wasReset)
    }

    @Test func readingUntilClosedGivesUpAfterTheTimeout() throws {
        // The server keeps an idle connection for a minute; the client waits a tenth of a second.
        let server = try TestHTTPServer(options: .init(ioTimeout: 60))
        defer { server.stop() }
        let connection = try RawConnection(port: server.port, timeout: .milliseconds(100))
        #expect(connection.readUntilClosed() == nil)
        #expect(throws: RawConnection.Failure.self) { try connection.readResponse() }
    }

    @Test func aResponseCutShortIsAFailureThatSaysSo() throws {
        // Half of the serialised response: the whole head and part of its 4,000 bytes of body.
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 4000)
        let server = try TestHTTPServer { _ in TestHTTPResponse(body: body, fault: .closeMidResponse) }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("GET / HTTP/1.1\r\n\r\n")
        let error = #expect(throws: RawConnection.Failure.self) { try connection.readResponse() }
        #expect(error?.description.contains("of 4000 bytes") == true, "\(String(describing: error))")
    }
}
