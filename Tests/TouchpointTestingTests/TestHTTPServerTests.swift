import Foundation
import Testing
import TouchpointCore

@testable import TouchpointTesting

struct TestHTTPServerTests {
    @Test func keepsConnectionsAliveAndNumbersThem() throws {
        let server = try TestHTTPServer { request in .text("you asked for \(request.path)") }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("GET /one HTTP/1.1\r\nHost: x\r\n\r\n")
        let first = try connection.readResponse()
        try connection.send("GET /two HTTP/1.1\r\nHost: x\r\n\r\n")
        let second = try connection.readResponse()
        #expect(first.status == 200)
        #expect(first.body == Array("you asked for /one".utf8))
        #expect(first.headers["connection"] == "keep-alive")
        #expect(second.body == Array("you asked for /two".utf8))
        #expect(server.requests.map(\.connection) == [1, 1])
        #expect(server.requests.map(\.sequence) == [0, 1])
        #expect(server.connectionCount == 1)
    }

    @Test func closesWhenTheClientAsks() throws {
        let server = try TestHTTPServer { _ in .text("bye") }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(try connection.readResponse().headers["connection"] == "close")
        #expect(connection.readUntilClosed() == "")
    }

    @Test func readsChunkedBodiesAndAnswers100Continue() throws {
        let server = try TestHTTPServer { request in TestHTTPResponse(status: 201, body: request.body) }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("POST /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n")
        #expect(try connection.readResponse().status == 100)
        try connection.send("5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 201)
        #expect(response.body == Array("hello, world".utf8))
        #expect(server.requests.first?.headers["transfer-encoding"] == "chunked")
    }

    @Test func sendsChunkedResponses() async throws {
        let body = Array(repeating: UInt8(ascii: "z"), count: 100_000)
        let server = try TestHTTPServer { _ in TestHTTPResponse(status: 200, body: body, isChunked: true) }
        defer { server.stop() }
        let response = try await URLSessionTransport().send(TransportRequest(url: server.url("/"), timeout: 5))
        #expect(response.body == body)
    }

    @Test func answersMalformedRequestsWith400AndCloses() throws {
        let server = try TestHTTPServer { _ in .text("never") }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("NONSENSE\r\n\r\n")
        #expect(try connection.readResponse().status == 400)
        #expect(connection.readUntilClosed() == "")
        #expect(server.requestCount == 0)
    }

    @Test func givesScriptedResponsesFirstThenAsksTheHandler() async throws {
        let server = try TestHTTPServer { _ in .text("handler") }
        defer { server.stop() }
        server.enqueue(.text("first", status: 503), .text("second", status: 429))
        let transport = URLSessionTransport()
        var statuses: [Int] = []
        for _ in 0..<3 {
            statuses.append(try await transport.send(TransportRequest(url: server.url("/"), timeout: 5)).status)
        }
        #expect(statuses == [503, 429, 200])
    }

    @Test func headResponsesHaveNoBody() throws {
        let server = try TestHTTPServer { _ in .text("body") }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("HEAD / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n")
        let head = try connection.readResponse(bodyless: true)
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == "4")
        // No body bytes were sent: the next response follows at once.
        let next = try connection.readResponse()
        #expect(next.status == 200)
        #expect(next.body == Array("body".utf8))
    }

    /// While stopped, a server holds its port: the system does not hand it to a server that asks
    /// for any free port (a freed port came back about once in 6,000 requests here, so 30,000
    /// requests would see it about five times).
    @Test func aStoppedServerKeepsItsPortFromOtherServers() throws {
        let server = try TestHTTPServer { _ in .text("up") }
        let port = server.port
        server.stop()
        var handedOut = 0
        for _ in 0..<30_000 {
            let (descriptor, other) = try Socket.listen(port: 0, backlog: 1)
            Socket.close(descriptor)
            if other == port { handedOut += 1 }
        }
        #expect(handedOut == 0)
        try server.restart()
        #expect(server.port == port)
        server.stop()
    }

    @Test func stopRefusesConnectionsAndRestartListensOnTheSamePort() async throws {
        let server = try TestHTTPServer { _ in .text("up") }
        defer { server.stop() }
        let port = server.port
        let transport = URLSessionTransport()
        #expect(try await transport.send(TransportRequest(url: server.url("/"), timeout: 5)).status == 200)
        server.stop()
        #expect(!server.isRunning)
        #expect(throws: RawConnection.Failure.self) { try RawConnection(port: port) }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(TransportRequest(url: server.url("/"), timeout: 5))
        }
        #expect(error?.code == .connectionFailed)
        try server.restart()
        #expect(server.isRunning)
        #expect(server.port == port)
        #expect(try await transport.send(TransportRequest(url: server.url("/"), timeout: 5)).status == 200)
    }

    @Test func aSlowHandlerIsAnsweredFor() throws {
        let server = try TestHTTPServer(options: .init(handlerTimeout: 0.2)) { _ in
            try? await Task.sleep(nanoseconds: 5_000_000_000)
            return .text("too late")
        }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("GET / HTTP/1.1\r\n\r\n")
        #expect(try connection.readResponse().status == 500)
    }

    @Test func idleConnectionsAreClosedAfterTheIOTimeout() throws {
        let server = try TestHTTPServer(options: .init(ioTimeout: 0.2))
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        #expect(connection.readUntilClosed() == "")
    }

    @Test func resetSendsARST() throws {
        let server = try TestHTTPServer { _ in .fault(.reset) }
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        try connection.send("GET / HTTP/1.1\r\n\r\n")
        #expect(connection.readUntilClosed() == "")
        #expect(connection.wasReset)
    }

    @Test func waitingForRequestsIsBounded() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        #expect(await server.waitForRequests(1, timeout: 0.05) == false)
        _ = try? await URLSessionTransport().send(TransportRequest(url: server.url("/x"), timeout: 5))
        #expect(await server.waitForRequests(1, timeout: 5))
        server.clearLog()
        #expect(server.requestCount == 0)
    }

    @Test func releasingTheServerStopsIt() throws {
        var server: TestHTTPServer? = try TestHTTPServer()
        let port = server!.port
        _ = try RawConnection(port: port)
        server = nil
        #expect(throws: RawConnection.Failure.self) { try RawConnection(port: port) }
    }
}
