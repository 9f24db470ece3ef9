import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

struct URLSessionTransportTests {
    let transport = URLSessionTransport()

    @Test(arguments: [200, 201, 204, 304, 400, 404, 429, 500, 503])
    func returnsEveryStatusAsAResponse(status: Int) async throws {
        let server = try TestHTTPServer { _ in TestHTTPResponse(status: status, headers: ["X-Status": "\(status)"]) }
        defer { server.stop() }
        let response = try await transport.send(TransportRequest(url: server.url("/status"), timeout: 5))
        #expect(response.status == status)
        #expect(response.headers["x-status"] == "\(status)")
    }

    @Test func sendsMethodHeadersAndBodyAndReadsThemBack() async throws {
        let server = try TestHTTPServer { request in
            TestHTTPResponse(
                status: 201, headers: ["ETag": "\"abc\"", "Set-Cookie": "a=b"], body: request.body.reversed())
        }
        defer { server.stop() }
        let body = Array("hello, collector".utf8)
        let request = TransportRequest(
            method: .post,
            url: server.url("/v1/batch?x=1"),
            headers: ["Content-Type": "application/json", "Authorization": "Basic a2V5Og=="],
            body: body,
            timeout: 5
        )
        let response = try await transport.send(request)
        #expect(response.status == 201)
        #expect(response.body == body.reversed())
        #expect(response.headers["etag"] == "\"abc\"")
        let received = try #require(server.requests.first)
        #expect(received.method == .post)
        #expect(received.target == "/v1/batch?x=1")
        #expect(received.path == "/v1/batch")
        #expect(received.headers["content-type"] == "application/json")
        #expect(received.headers["AUTHORIZATION"] == "Basic a2V5Og==")
        #expect(received.body == body)
    }

    @Test(arguments: [false, true])
    func carriesLargeBodiesBothWays(chunked: Bool) async throws {
        let upload = randomBytes(count: 2_000_000, seed: 7)
        let server = try TestHTTPServer { request in
            TestHTTPResponse(status: 200, body: request.body + request.body, isChunked: chunked)
        }
        defer { server.stop() }
        let response = try await transport.send(
            TransportRequest(method: .put, url: server.url("/big"), body: upload, timeout: 20))
        #expect(response.status == 200)
        #expect(response.body.count == upload.count * 2)
        #expect(Array(response.body[..<upload.count]) == upload)
        #expect(Array(response.body[upload.count...]) == upload)
    }

    @Test func timesOutAfterTheRequestTimeoutWhenTheServerStalls() async throws {
        let server = try TestHTTPServer { _ in .fault(.stall(seconds: 10)) }
        defer { server.stop() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(TransportRequest(url: server.url("/slow"), timeout: 0.3))
        }
        #expect(error?.code == .timeout)
        #expect(error?.url == server.url("/slow"))
        // The stall is 10 s: a timeout error can only come from the client's own 0.3 s deadline.
    }

    @Test func reportsAResetConnection() async throws {
        let server = try TestHTTPServer { _ in .fault(.reset) }
        defer { server.stop() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(TransportRequest(url: server.url("/reset"), timeout: 5))
        }
        #expect(error?.code == .connectionReset || error?.code == .invalidResponse)
        #expect(error?.isTransient == true)
    }

    /// FoundationNetworking resends a request when a reused connection dies, without its body;
    /// the transport must not be left waiting for the timeout.
    @Test func aResetAfterAnEarlierRequestFailsFastForRequestsWithABody() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.enqueue(.text("first"), .fault(.reset), .fault(.reset), .text("third"))
        let post = TransportRequest(method: .post, url: server.url("/p"), body: Array("x".utf8), timeout: 30)
        #expect(try await transport.send(post).status == 200)
        let error = await #expect(throws: TransportError.self) { try await transport.send(post) }
        #expect(error?.code != .timeout)
        // Whether or not the client resent it, the server saw every request whole.
        #expect(server.requests.allSatisfy { $0.body == Array("x".utf8) })
    }

    @Test func reportsAResponseCutShort() async throws {
        let server = try TestHTTPServer { _ in
            TestHTTPResponse(status: 200, body: Array(repeating: 65, count: 10_000), fault: .closeMidResponse)
        }
        defer { server.stop() }
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(TransportRequest(url: server.url("/cut"), timeout: 5))
        }
        #expect(error?.code == .connectionReset || error?.code == .invalidResponse)
    }

    @Test func reportsARefusedConnection() async throws {
        let server = try TestHTTPServer()
        let url = server.url("/gone")
        server.stop()
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(TransportRequest(url: url, timeout: 5))
        }
        #expect(error?.code == .connectionFailed)
        #expect(error?.description.contains(url.absoluteString) == true)
    }

    @Test func rejectsARequestThatCannotBeSent() async throws {
        let error = await #expect(throws: TransportError.self) {
            try await transport.send(TransportRequest(url: URL(string: "ftp://example.com/file")!))
        }
        #expect(error?.code == .invalidRequest)
        #expect(error?.isTransient == false)
    }

    @Test func cancellingTheTaskCancelsTheRequest() async throws {
        let server = try TestHTTPServer { _ in .fault(.stall(seconds: 120)) }
        defer { server.stop() }
        let transport = self.transport
        let task = Task { try await transport.send(TransportRequest(url: server.url("/hang"), timeout: 120)) }
        #expect(await server.waitForRequests(1, timeout: 110))
        task.cancel()
        let result = await task.result
        #expect(throws: TransportError.self) { try result.get() }
        if case .failure(let error as TransportError) = result { #expect(error.code == .cancelled) }
    }

    @Test func followsARedirectOnTheSameHostOnly() async throws {
        let other = try TestHTTPServer { _ in .text("elsewhere") }
        defer { other.stop() }
        let server = try TestHTTPServer { request in
            switch request.path {
            case "/moved": return TestHTTPResponse(status: 302, headers: ["Location": "/here"])
            case "/away": return TestHTTPResponse(status: 302, headers: ["Location": other.url("/x").absoluteString])
            default: return .text("here")
            }
        }
        defer { server.stop() }
        let followed = try await transport.send(TransportRequest(url: server.url("/moved"), timeout: 5))
        #expect(followed.status == 200)
        #expect(followed.body == Array("here".utf8))
        let refused = try await transport.send(TransportRequest(url: server.url("/away"), timeout: 5))
        #expect(refused.status == 302)
        #expect(refused.headers["Location"] == other.url("/x").absoluteString)
        #expect(other.requestCount == 0)
    }

    @Test func refusesAResponseOverTheSizeLimit() async throws {
        let server = try TestHTTPServer { _ in TestHTTPResponse(status: 200, body: Array(repeating: 1, count: 200_000))
        }
        defer { server.stop() }
        let small = URLSessionTransport(configuration: .init(maximumResponseBytes: 100_000))
        let error = await #expect(throws: TransportError.self) {
            try await small.send(TransportRequest(url: server.url("/huge"), timeout: 5))
        }
        #expect(error?.code == .responseTooLarge)
    }

    @Test func servesManyConcurrentRequests() async throws {
        let server = try TestHTTPServer { request in .text(request.path) }
        defer { server.stop() }
        let transport = self.transport
        let bodies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<64 {
                group.addTask {
                    let response = try await transport.send(
                        TransportRequest(url: server.url("/item/\(index)"), timeout: 10))
                    return (index, String(decoding: response.body, as: UTF8.self))
                }
            }
            var bodies: [Int: String] = [:]
            for try await (index, body) in group { bodies[index] = body }
            return bodies
        }
        #expect(bodies.count == 64)
        for (index, body) in bodies { #expect(body == "/item/\(index)") }
        #expect(server.requestCount == 64)
    }
}

/// `count` reproducible pseudo-random bytes, generated eight at a time.
func randomBytes(count: Int, seed: UInt64) -> [UInt8] {
    var random = SeededRandomNumberGenerator(seed: seed)
    var words = [UInt64](repeating: 0, count: (count + 7) / 8)
    for index in words.indices { words[index] = random.next() }
    return words.withUnsafeBytes { Array($0.prefix(count)) }
}
