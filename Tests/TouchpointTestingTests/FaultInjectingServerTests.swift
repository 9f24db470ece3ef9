import Foundation
import Testing
import TouchpointCore

@testable import TouchpointTesting

/// Each fault kind, observed by a real client through the proxy in front of a real upstream.
struct FaultInjectingServerTests {
    let transport = URLSessionTransport()

    /// An upstream that echoes what it received.
    func makeUpstream() throws -> TestHTTPServer {
        try TestHTTPServer { request in
            TestHTTPResponse(
                status: 202,
                headers: ["X-Upstream": "yes", "X-Method": request.method.rawValue, "X-Target": request.target],
                body: request.body
            )
        }
    }

    func post(
        _ proxy: FaultInjectingServer, _ path: String = "/v1/batch", body: String = "payload", timeout: Double = 5
    )
        async throws -> TransportResponse
    {
        try await transport.send(
            TransportRequest(
                method: .post,
                url: proxy.url(path),
                headers: ["Authorization": "Basic a2V5Og==", "Content-Type": "application/json"],
                body: Array(body.utf8),
                timeout: timeout
            )
        )
    }

    @Test func forwardsRequestsAndResponsesUnchanged() async throws {
        let upstream = try makeUpstream()
        defer { upstream.stop() }
        let proxy = try FaultInjectingServer(plan: .none, upstream: upstream.baseURL)
        defer { proxy.stop() }
        let response = try await post(proxy, "/v1/batch?source=test", body: #"{"batch":[]}"#)
        #expect(response.status == 202)
        #expect(response.headers["x-upstream"] == "yes")
        #expect(response.headers["x-target"] == "/v1/batch?source=test")
        #expect(response.body == Array(#"{"batch":[]}"#.utf8))
        let received = try #require(upstream.requests.first)
        #expect(received.headers["authorization"] == "Basic a2V5Og==")
        #expect(received.body == Array(#"{"batch":[]}"#.utf8))
        #expect(proxy.statistics.forwarded == 1)
        #expect(proxy.statistics.totalInjected == 0)
        #expect(proxy.records.first?.upstreamStatus == 202)
    }

    @Test(
        arguments: [
            (FaultPlan.Fault.internalServerError, 500, nil),
            (.serviceUnavailable(retryAfter: "3"), 503, 3.0),
            (.tooManyRequests(retryAfter: "Sun, 06 Nov 1994 08:49:47 GMT"), 429, 10.0),
            (.payloadTooLarge, 413, nil),
        ] as [(FaultPlan.Fault, Int, Double?)])
    func injectsStatusesWithoutForwarding(fault: FaultPlan.Fault, status: Int, retryAfter: Double?) async throws {
        let upstream = try makeUpstream()
        defer { upstream.stop() }
        let proxy = try FaultInjectingServer(plan: FaultPlan(sequence: [fault]), upstream: upstream.baseURL)
        defer { proxy.stop() }
        let response = try await post(proxy)
        #expect(response.status == status)
        #expect(response.retryAfter(now: Date(timeIntervalSince1970: 784_111_777)) == retryAfter)
        #expect(upstream.requestCount == 0)
        #expect(proxy.statistics.injected[fault] == 1)
        #expect(proxy.statistics.forwarded == 0)
        // The next request is forwarded.
        #expect(try await post(proxy).status == 202)
        #expect(upstream.requestCount == 1)
    }

    @Test func bodiesOverThePayloadLimitGet413() async throws {
        let upstream = try makeUpstream()
        defer { upstream.stop() }
        let proxy = try FaultInjectingServer(plan: FaultPlan(payloadLimit: 10), upstream: upstream.baseURL)
        defer { proxy.stop() }
        #expect(try await post(proxy, body: String(repeating: "x", count: 11)).status == 413)
        #expect(try await post(proxy, body: String(repeating: "x", count: 10)).status == 202)
        #expect(proxy.statistics.injected == [.payloadTooLarge: 1])
    }

    @Test func resetsTheConnection() async throws {
        let upstream = try makeUpstream()
        defer { upstream.stop() }
        let proxy = try FaultInjectingServer(plan: FaultPlan(rates: [.reset: 1]), upstream: upstream.baseURL)
        defer { proxy.stop() }
        let error = await #expect(throws: TransportError.self) { try await post(proxy) }
        #expect(error?.code == .connectionReset || error?.code == .invalidResponse)
        #expect(upstream.requestCount == 0)
        #expect(proxy.statistics.injected[.reset]! >= 1)
    }

    @Test func closesMidResponseAfterTheUpstreamDidTheWork() async throws {
        let upstream = try makeUpstream()
        defer { upstream.stop() }
        let proxy = try FaultInjectingServer(
            plan: FaultPlan(sequence: [.closeMidResponse]),
            upstream: upstream.baseURL
        )
        defer { proxy.stop() }
        let error = await #expect(throws: TransportError.self) {
            try await post(proxy, body: String(repeating: "event ", count: 1_000))
        }
        #expect(error?.code == .connectionReset)
        // The lost acknowledgement: the upstream received the batch.
        #expect(upstream.requestCount == 1)
        #expect(proxy.statistics.forwarded == 1)
        #expect(proxy.statistics.injected[.closeMidResponse] == 1)
    }

    @Test func stallsPastTheClientsTimeout() async throws {
        let upstream = try makeUpstream()
        defer { upstream.stop() }
        let proxy = try FaultInjectingServer(
            plan: FaultPlan(sequence: [.stall(seconds: 10)]), upstream: upstream.baseURL)
        defer { proxy.stop() }
        let error = await #expect(throws: TransportError.self) { try await post(proxy, timeout: 0.3) }
        #expect(error?.code == .timeout)
        #expect(upstream.requestCount == 0)
        #expect(try await post(proxy).status == 202)
    }

    @Test func goesDownAndComesBackOnTheSamePort() async throws {
        let upstream = try makeUpstream()
        defer { upstream.stop() }
        let proxy = try FaultInjectingServer(
            plan: FaultPlan(sequence: [.down(seconds: 0.3)]), upstream: upstream.baseURL)
        defer { proxy.stop() }
        let port = proxy.server.port
        _ = await #expect(throws: TransportError.self) { try await post(proxy) }
        // While down, connections are refused.
        let refused = await #expect(throws: TransportError.self) { try await post(proxy) }
        #expect(refused?.code == .connectionFailed)
        // Back up on the same port after the pause (bounded wait).
        var status: Int?
        for _ in 0..<100 where status == nil {
            try await Task.sleep(nanoseconds: 20_000_000)
            status = try? await post(proxy).status
        }
        #expect(status == 202)
        #expect(proxy.server.port == port)
        #expect(proxy.statistics.injected[.down(seconds: 0.3)] == 1)
        #expect(proxy.statistics.received == 2)
    }

    @Test func standaloneModeUsesItsOwnHandler() async throws {
        let proxy = try FaultInjectingServer(plan: FaultPlan(sequence: [.internalServerError])) { _ in .text("ok") }
        defer { proxy.stop() }
        #expect(try await post(proxy).status == 500)
        let response = try await post(proxy)
        #expect(response.body == Array("ok".utf8))
        #expect(proxy.statistics.forwarded == 1)
    }

    @Test func anUnreachableUpstreamIs502() async throws {
        // A port held but not listening refuses connections, and no other test can take it over
        // (a stopped server's port could be handed to a server of a test running alongside).
        let refusing = try Socket.reserve(port: 0)
        defer { Socket.close(refusing.descriptor) }
        let upstream = URL(string: "http://127.0.0.1:\(refusing.port)")!
        let proxy = try FaultInjectingServer(plan: .none, upstream: upstream, upstreamTimeout: 2)
        defer { proxy.stop() }
        #expect(try await post(proxy).status == 502)
        #expect(proxy.statistics.upstreamFailures == 1)
        #expect(proxy.records.first?.upstreamStatus == nil)
    }

    /// A client that retries until it gets through: every payload arrives, and the counts add up.
    @Test func aRetryingClientGetsEverythingThroughAndTheCountsAddUp() async throws {
        let upstream = try makeUpstream()
        defer { upstream.stop() }
        let plan = FaultPlan(
            seed: 77,
            rates: [.internalServerError: 0.2, .serviceUnavailable(retryAfter: "0"): 0.1, .reset: 0.1],
            maximumConsecutiveFaults: 4
        )
        let proxy = try FaultInjectingServer(plan: plan, upstream: upstream.baseURL)
        defer { proxy.stop() }
        var attempts = 0
        for index in 0..<40 {
            var delivered = false
            while !delivered && attempts < 1_000 {
                attempts += 1
                delivered = (try? await post(proxy, body: "event-\(index)").status) == 202
            }
        }
        let bodies = upstream.requests.map(\.bodyText)
        #expect(Set(bodies) == Set((0..<40).map { "event-\($0)" }))
        let statistics = proxy.statistics
        #expect(statistics.forwarded == upstream.requestCount)
        #expect(statistics.received == statistics.forwarded + statistics.totalInjected)
        #expect(statistics.totalInjected > 0)
        // A reset on a kept-alive connection may be resent once by the client library, so the
        // proxy can see more requests than the client made, never fewer.
        #expect(statistics.received >= attempts)
    }
}
